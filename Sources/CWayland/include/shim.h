// libpipewire-0.3 and sd-bus (libsystemd) for SwiftRecordWayland. The only place their
// macros are touched: Swift cannot import variadic functions or function-like macros, so
// the SPA pods the stream offers are built here, one function each.
#ifndef SWIFT_RECORD_CWAYLAND_SHIM_H
#define SWIFT_RECORD_CWAYLAND_SHIM_H

#include <stdint.h>
#include <pipewire/pipewire.h>
#include <spa/param/video/format-utils.h>
#include <spa/param/video/type-info.h>
#include <spa/param/buffers.h>
#include <spa/param/param.h>
#include <spa/buffer/meta.h>
#include <spa/pod/builder.h>
#include <systemd/sd-bus.h>

/// The formats a compositor without a GPU sends (shared memory, 4 bytes a pixel), any size,
/// any rate: the EnumFormat pod `pw_stream_connect` offers. Written into `buffer`; NULL when
/// it does not fit.
static inline const struct spa_pod *sr_pw_video_formats(uint8_t *buffer, uint32_t size) {
    struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buffer, size);
    struct spa_rectangle defSize = SPA_RECTANGLE(1920, 1080), minSize = SPA_RECTANGLE(1, 1),
                         maxSize = SPA_RECTANGLE(16384, 16384);
    struct spa_fraction defRate = SPA_FRACTION(30, 1), minRate = SPA_FRACTION(0, 1), maxRate = SPA_FRACTION(1000, 1);
    return (const struct spa_pod *)spa_pod_builder_add_object(&b,
        SPA_TYPE_OBJECT_Format, SPA_PARAM_EnumFormat,
        SPA_FORMAT_mediaType, SPA_POD_Id(SPA_MEDIA_TYPE_video),
        SPA_FORMAT_mediaSubtype, SPA_POD_Id(SPA_MEDIA_SUBTYPE_raw),
        SPA_FORMAT_VIDEO_format, SPA_POD_CHOICE_ENUM_Id(5, SPA_VIDEO_FORMAT_BGRx, SPA_VIDEO_FORMAT_BGRx, SPA_VIDEO_FORMAT_BGRA,
                                                        SPA_VIDEO_FORMAT_RGBx, SPA_VIDEO_FORMAT_RGBA),
        SPA_FORMAT_VIDEO_size, SPA_POD_CHOICE_RANGE_Rectangle(&defSize, &minSize, &maxSize),
        SPA_FORMAT_VIDEO_framerate, SPA_POD_CHOICE_RANGE_Fraction(&minRate, &minRate, &maxRate));
}

/// Bytes of cursor metadata with a bitmap of `w` x `h` 4-byte pixels.
#define SR_CURSOR_META_SIZE(w, h) ((int)(sizeof(struct spa_meta_cursor) + sizeof(struct spa_meta_bitmap) + (w) * (h) * 4))

/// What the stream asks of the buffers once a format is chosen: shared memory (MemFd or
/// MemPtr, never DMA-BUF), and the header, crop-region and damage metadata, and with `cursor`
/// the cursor's. Writes up to 5 pods into `params`; returns how many, 0 when they do not fit.

static inline uint32_t sr_pw_buffer_params(uint8_t *buffer, uint32_t size, const struct spa_pod **params, int cursor) {
    struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buffer, size);
    params[0] = (const struct spa_pod *)spa_pod_builder_add_object(&b,
        SPA_TYPE_OBJECT_ParamBuffers, SPA_PARAM_Buffers,
        SPA_PARAM_BUFFERS_buffers, SPA_POD_CHOICE_RANGE_Int(8, 2, 16),
        SPA_PARAM_BUFFERS_dataType, SPA_POD_CHOICE_FLAGS_Int((1 << SPA_DATA_MemFd) | (1 << SPA_DATA_MemPtr)));
    params[1] = (const struct spa_pod *)spa_pod_builder_add_object(&b,
        SPA_TYPE_OBJECT_ParamMeta, SPA_PARAM_Meta,
        SPA_PARAM_META_type, SPA_POD_Id(SPA_META_Header),
        SPA_PARAM_META_size, SPA_POD_Int(sizeof(struct spa_meta_header)));
    params[2] = (const struct spa_pod *)spa_pod_builder_add_object(&b,
        SPA_TYPE_OBJECT_ParamMeta, SPA_PARAM_Meta,
        SPA_PARAM_META_type, SPA_POD_Id(SPA_META_VideoCrop),
        SPA_PARAM_META_size, SPA_POD_Int(sizeof(struct spa_meta_region)));
    params[3] = (const struct spa_pod *)spa_pod_builder_add_object(&b,
        SPA_TYPE_OBJECT_ParamMeta, SPA_PARAM_Meta,
        SPA_PARAM_META_type, SPA_POD_Id(SPA_META_VideoDamage),
        SPA_PARAM_META_size, SPA_POD_CHOICE_RANGE_Int(sizeof(struct spa_meta_region) * 16,
                                                      sizeof(struct spa_meta_region) * 1,
                                                      sizeof(struct spa_meta_region) * 16));
    for (int i = 0; i < 4; i++) if (params[i] == NULL) return 0;
    if (!cursor) return 4;
    // The cursor as metadata (cursor mode "metadata"): position, hotspot and, when the
    // shape changes, a bitmap of up to 1024x1024 after the two headers (Mutter offers room for 384x384).
    params[4] = (const struct spa_pod *)spa_pod_builder_add_object(&b,
        SPA_TYPE_OBJECT_ParamMeta, SPA_PARAM_Meta,
        SPA_PARAM_META_type, SPA_POD_Id(SPA_META_Cursor),
        SPA_PARAM_META_size, SPA_POD_CHOICE_RANGE_Int(SR_CURSOR_META_SIZE(64, 64), SR_CURSOR_META_SIZE(1, 1),
                                                      SR_CURSOR_META_SIZE(1024, 1024)));
    return params[4] == NULL ? 0 : 5;
}

/// The damaged rectangles a buffer carries (`SPA_META_VideoDamage`, in the stream picture's
/// coordinates): writes up to `max` of them to `out` and returns how many; -1 when the buffer
/// has no damage metadata, `max + 1` when it lists more than `max` (take the whole picture).
/// The list ends at the first region without a size or at the end of the metadata.
static inline int sr_pw_damage(struct spa_buffer *buffer, struct spa_region *out, int max) {
    struct spa_meta *meta = spa_buffer_find_meta(buffer, SPA_META_VideoDamage);
    if (meta == NULL || meta->data == NULL) return -1;
    struct spa_meta_region *r;
    int n = 0;
    spa_meta_for_each(r, meta) {
        if (!spa_meta_region_is_valid(r)) break;
        if (n == max) return max + 1;
        out[n++] = r->region;
    }
    return n;
}

/// The raw video format of a Format pod: 0 and `info` filled, or a negative errno.
static inline int sr_pw_parse_video_format(const struct spa_pod *param, struct spa_video_info_raw *info) {
    uint32_t mediaType = 0, mediaSubtype = 0;
    if (param == NULL) return -EINVAL;
    if (spa_format_parse(param, &mediaType, &mediaSubtype) < 0) return -EINVAL;
    if (mediaType != SPA_MEDIA_TYPE_video || mediaSubtype != SPA_MEDIA_SUBTYPE_raw) return -ENOTSUP;
    return spa_format_video_raw_parse(param, info) < 0 ? -EINVAL : 0;
}

/// `sd_bus_error`'s initial value (SD_BUS_ERROR_NULL is a compound literal).
static inline sd_bus_error sr_sd_bus_error_null(void) { sd_bus_error e = SD_BUS_ERROR_NULL; return e; }

#endif
