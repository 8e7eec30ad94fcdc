// The V4L2 calls swift-record makes to list cameras: ioctl is variadic, which Swift cannot
// call, so each request used is wrapped here once. Reading pictures goes through
// libavdevice's v4l2 input (SwiftRecord's V4L2CameraSource).
#ifndef SWIFT_RECORD_CV4L2_SHIM_H
#define SWIFT_RECORD_CV4L2_SHIM_H

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <linux/videodev2.h>

/// What VIDIOC_QUERYCAP says of a device: its names and the device's own capabilities.
struct sr_v4l2_device {
    char driver[17], card[33], bus[33];
    uint32_t capabilities;
};

static inline int sr_v4l2_ioctl(int fd, unsigned long request, void *arg) {
    int r;
    do { r = ioctl(fd, request, arg); } while (r < 0 && errno == EINTR);
    return r < 0 ? -errno : 0;
}

/// 0 and `out` filled, or a negative errno (-ENOTTY: not a V4L2 device).
static inline int sr_v4l2_query(int fd, struct sr_v4l2_device *out) {
    struct v4l2_capability cap;
    memset(&cap, 0, sizeof cap);
    int r = sr_v4l2_ioctl(fd, VIDIOC_QUERYCAP, &cap);
    if (r < 0) return r;
    memset(out, 0, sizeof *out);
    memcpy(out->driver, cap.driver, sizeof cap.driver);
    memcpy(out->card, cap.card, sizeof cap.card);
    memcpy(out->bus, cap.bus_info, sizeof cap.bus_info);
    out->capabilities = (cap.capabilities & V4L2_CAP_DEVICE_CAPS) ? cap.device_caps : cap.capabilities;
    return 0;
}

/// Whether the capabilities include capturing video (single- or multi-planar).
static inline int sr_v4l2_captures_video(uint32_t capabilities) {
    return (capabilities & (V4L2_CAP_VIDEO_CAPTURE | V4L2_CAP_VIDEO_CAPTURE_MPLANE)) != 0;
}

/// The capture format at `index`: 0 with its fourcc and description, or a negative errno
/// (-EINVAL past the last).
static inline int sr_v4l2_format(int fd, uint32_t index, uint32_t *fourcc, char description[33]) {
    struct v4l2_fmtdesc f;
    memset(&f, 0, sizeof f);
    f.index = index;
    f.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    int r = sr_v4l2_ioctl(fd, VIDIOC_ENUM_FMT, &f);
    if (r < 0) return r;
    *fourcc = f.pixelformat;
    memset(description, 0, 33);
    memcpy(description, f.description, sizeof f.description);
    return 0;
}

/// The frame size at `index` for `fourcc`: 0 with a discrete size (`stepwise` 0), or the
/// largest of a continuous or stepwise range (`stepwise` 1); a negative errno past the last.
static inline int sr_v4l2_frame_size(int fd, uint32_t fourcc, uint32_t index, uint32_t *width, uint32_t *height, int *stepwise) {
    struct v4l2_frmsizeenum s;
    memset(&s, 0, sizeof s);
    s.index = index;
    s.pixel_format = fourcc;
    int r = sr_v4l2_ioctl(fd, VIDIOC_ENUM_FRAMESIZES, &s);
    if (r < 0) return r;
    if (s.type == V4L2_FRMSIZE_TYPE_DISCRETE) {
        *width = s.discrete.width;
        *height = s.discrete.height;
        *stepwise = 0;
    } else {
        *width = s.stepwise.max_width;
        *height = s.stepwise.max_height;
        *stepwise = 1;
    }
    return 0;
}

#endif
