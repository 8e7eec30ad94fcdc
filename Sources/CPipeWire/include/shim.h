// libpipewire-0.3 for SwiftRecordPipeWire (screen casts' and cameras' streams). The only place their
// macros are touched: Swift cannot import variadic functions or function-like macros, so
// the SPA pods the stream offers are built here, one function each.
#ifndef SWIFT_RECORD_CPIPEWIRE_SHIM_H
#define SWIFT_RECORD_CPIPEWIRE_SHIM_H

#include <stdint.h>
#include <pipewire/pipewire.h>
#include <spa/param/video/format-utils.h>
#include <spa/param/video/type-info.h>
#include <spa/param/buffers.h>
#include <spa/param/param.h>
#include <spa/buffer/meta.h>
#include <spa/pod/builder.h>

/// Open libpipewire-0.3 (not linked: pipewire.c's stubs call through the functions looked
/// up here): NULL when loaded, else the dynamic loader's reason. Once per process; called by
/// PipeWireLibrary before any other function of its.
const char *sr_pipewire_load(void);

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

// ---- Cameras: PipeWire `Video/Source` nodes -------------------------------------------

/// The formats a camera stream takes: raw YUY2, NV12 or I420 (in that order), with `rgb`
/// also BGRx, BGRA, RGBx and RGBA after them (any producer's: a renderer, GStreamer), then
/// MJPG, of any size with `width`x`height` preferred, at any rate with `fps` preferred.
/// Writes 2 pods into `params`; returns how many, 0 when they do not fit.
static inline uint32_t sr_pw_camera_formats(uint8_t *buffer, uint32_t size, const struct spa_pod **params,
                                            uint32_t width, uint32_t height, uint32_t fps, int rgb) {
    struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buffer, size);
    struct spa_rectangle defSize = SPA_RECTANGLE(width, height), minSize = SPA_RECTANGLE(1, 1),
                         maxSize = SPA_RECTANGLE(16384, 16384);
    struct spa_fraction defRate = SPA_FRACTION(fps, 1), minRate = SPA_FRACTION(0, 1), maxRate = SPA_FRACTION(1000, 1);
    // (The choice is a macro expanding to two arguments: one object per list.)
#define SR_RAW_FORMATS(choice) (const struct spa_pod *)spa_pod_builder_add_object(&b, \
        SPA_TYPE_OBJECT_Format, SPA_PARAM_EnumFormat, \
        SPA_FORMAT_mediaType, SPA_POD_Id(SPA_MEDIA_TYPE_video), \
        SPA_FORMAT_mediaSubtype, SPA_POD_Id(SPA_MEDIA_SUBTYPE_raw), \
        SPA_FORMAT_VIDEO_format, choice, \
        SPA_FORMAT_VIDEO_size, SPA_POD_CHOICE_RANGE_Rectangle(&defSize, &minSize, &maxSize), \
        SPA_FORMAT_VIDEO_framerate, SPA_POD_CHOICE_RANGE_Fraction(&defRate, &minRate, &maxRate))
    params[0] = rgb ? SR_RAW_FORMATS(SPA_POD_CHOICE_ENUM_Id(8, SPA_VIDEO_FORMAT_YUY2, SPA_VIDEO_FORMAT_YUY2, SPA_VIDEO_FORMAT_NV12,
                                                            SPA_VIDEO_FORMAT_I420, SPA_VIDEO_FORMAT_BGRx, SPA_VIDEO_FORMAT_BGRA,
                                                            SPA_VIDEO_FORMAT_RGBx, SPA_VIDEO_FORMAT_RGBA))
                    : SR_RAW_FORMATS(SPA_POD_CHOICE_ENUM_Id(4, SPA_VIDEO_FORMAT_YUY2, SPA_VIDEO_FORMAT_YUY2, SPA_VIDEO_FORMAT_NV12,
                                                            SPA_VIDEO_FORMAT_I420));
#undef SR_RAW_FORMATS
    params[1] = (const struct spa_pod *)spa_pod_builder_add_object(&b,
        SPA_TYPE_OBJECT_Format, SPA_PARAM_EnumFormat,
        SPA_FORMAT_mediaType, SPA_POD_Id(SPA_MEDIA_TYPE_video),
        SPA_FORMAT_mediaSubtype, SPA_POD_Id(SPA_MEDIA_SUBTYPE_mjpg),
        SPA_FORMAT_VIDEO_size, SPA_POD_CHOICE_RANGE_Rectangle(&defSize, &minSize, &maxSize),
        SPA_FORMAT_VIDEO_framerate, SPA_POD_CHOICE_RANGE_Fraction(&defRate, &minRate, &maxRate));
    return params[0] != NULL && params[1] != NULL ? 2 : 0;
}

/// A chosen video format: raw (`format`, an `spa_video_format`) or MJPG (`mjpeg` 1), its
/// size and frame rate (0/0 when the format says none).
struct sr_video_format {
    uint32_t mjpeg, format, width, height, rate_num, rate_den;
};

/// Reads a Format pod, raw or MJPG: 0 and `out` filled, or a negative errno.
static inline int sr_pw_parse_any_video_format(const struct spa_pod *param, struct sr_video_format *out) {
    uint32_t mediaType = 0, mediaSubtype = 0;
    if (param == NULL) return -EINVAL;
    if (spa_format_parse(param, &mediaType, &mediaSubtype) < 0) return -EINVAL;
    if (mediaType != SPA_MEDIA_TYPE_video) return -ENOTSUP;
    if (mediaSubtype == SPA_MEDIA_SUBTYPE_raw) {
        struct spa_video_info_raw info = {0};
        if (spa_format_video_raw_parse(param, &info) < 0) return -EINVAL;
        *out = (struct sr_video_format){0, info.format, info.size.width, info.size.height, info.framerate.num, info.framerate.denom};
        return 0;
    }
    if (mediaSubtype == SPA_MEDIA_SUBTYPE_mjpg) {
        struct spa_video_info_mjpg info = {0};
        if (spa_format_video_mjpg_parse(param, &info) < 0) return -EINVAL;
        *out = (struct sr_video_format){1, 0, info.size.width, info.size.height, info.framerate.num, info.framerate.denom};
        return 0;
    }
    return -ENOTSUP;
}

/// The registry, its listener and the core's (the macros behind them are not importable).
static inline struct pw_registry *sr_pw_core_get_registry(struct pw_core *core) {
    return pw_core_get_registry(core, PW_VERSION_REGISTRY, 0);
}
static inline int sr_pw_registry_add_listener(struct pw_registry *registry, struct spa_hook *hook,
                                              const struct pw_registry_events *events, void *data) {
    return pw_registry_add_listener(registry, hook, events, data);
}
static inline int sr_pw_core_add_listener(struct pw_core *core, struct spa_hook *hook,
                                          const struct pw_core_events *events, void *data) {
    return pw_core_add_listener(core, hook, events, data);
}
/// Asks the server for a `done` event with `seq` once it has sent everything before it.
static inline int sr_pw_core_sync(struct pw_core *core, int seq) { return pw_core_sync(core, PW_ID_CORE, seq); }

/// An event on `loop`: `func` runs on the loop's thread after `sr_pw_loop_signal_event`,
/// which any thread may call (an eventfd write). The stream's "give the returned buffers
/// back" wake-up.
static inline struct spa_source *sr_pw_loop_add_event(struct pw_loop *loop, void (*func)(void *data, uint64_t count), void *data) {
    return pw_loop_add_event(loop, func, data);
}
static inline int sr_pw_loop_signal_event(struct pw_loop *loop, struct spa_source *source) {
    return pw_loop_signal_event(loop, source);
}
static inline void sr_pw_loop_destroy_source(struct pw_loop *loop, struct spa_source *source) {
    pw_loop_destroy_source(loop, source);
}

/// Tests' camera: one fixed format (raw `format`, or MJPG when `mjpeg`), the EnumFormat pod
/// a producer offers.
static inline const struct spa_pod *sr_pw_fixed_video_format(uint8_t *buffer, uint32_t size, int mjpeg, uint32_t format,
                                                             uint32_t width, uint32_t height, uint32_t fps) {
    struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buffer, size);
    struct spa_rectangle sz = SPA_RECTANGLE(width, height);
    struct spa_fraction rate = SPA_FRACTION(fps, 1);
    if (mjpeg)
        return (const struct spa_pod *)spa_pod_builder_add_object(&b,
            SPA_TYPE_OBJECT_Format, SPA_PARAM_EnumFormat,
            SPA_FORMAT_mediaType, SPA_POD_Id(SPA_MEDIA_TYPE_video),
            SPA_FORMAT_mediaSubtype, SPA_POD_Id(SPA_MEDIA_SUBTYPE_mjpg),
            SPA_FORMAT_VIDEO_size, SPA_POD_Rectangle(&sz),
            SPA_FORMAT_VIDEO_framerate, SPA_POD_Fraction(&rate));
    return (const struct spa_pod *)spa_pod_builder_add_object(&b,
        SPA_TYPE_OBJECT_Format, SPA_PARAM_EnumFormat,
        SPA_FORMAT_mediaType, SPA_POD_Id(SPA_MEDIA_TYPE_video),
        SPA_FORMAT_mediaSubtype, SPA_POD_Id(SPA_MEDIA_SUBTYPE_raw),
        SPA_FORMAT_VIDEO_format, SPA_POD_Id(format),
        SPA_FORMAT_VIDEO_size, SPA_POD_Rectangle(&sz),
        SPA_FORMAT_VIDEO_framerate, SPA_POD_Fraction(&rate));
}

/// Tests' camera: the buffers it fills (memory of its own, `frame_size` bytes, rows `stride`
/// apart) with a header for the time stamps.
static inline uint32_t sr_pw_producer_buffers(uint8_t *buffer, uint32_t size, const struct spa_pod **params,
                                              uint32_t frame_size, uint32_t stride) {
    struct spa_pod_builder b = SPA_POD_BUILDER_INIT(buffer, size);
    params[0] = (const struct spa_pod *)spa_pod_builder_add_object(&b,
        SPA_TYPE_OBJECT_ParamBuffers, SPA_PARAM_Buffers,
        SPA_PARAM_BUFFERS_buffers, SPA_POD_CHOICE_RANGE_Int(4, 2, 8),
        SPA_PARAM_BUFFERS_blocks, SPA_POD_Int(1),
        SPA_PARAM_BUFFERS_size, SPA_POD_Int(frame_size),
        SPA_PARAM_BUFFERS_stride, SPA_POD_Int(stride),
        SPA_PARAM_BUFFERS_dataType, SPA_POD_CHOICE_FLAGS_Int((1 << SPA_DATA_MemPtr) | (1 << SPA_DATA_MemFd)));
    params[1] = (const struct spa_pod *)spa_pod_builder_add_object(&b,
        SPA_TYPE_OBJECT_ParamMeta, SPA_PARAM_Meta,
        SPA_PARAM_META_type, SPA_POD_Id(SPA_META_Header),
        SPA_PARAM_META_size, SPA_POD_Int(sizeof(struct spa_meta_header)));
    return params[0] != NULL && params[1] != NULL ? 2 : 0;
}

/// A timer on `loop` calling `func` every `interval_ns` (the tests' camera's frame clock).
static inline struct spa_source *sr_pw_loop_add_timer(struct pw_loop *loop, void (*func)(void *data, uint64_t expirations), void *data) {
    return pw_loop_add_timer(loop, func, data);
}
static inline int sr_pw_loop_start_timer(struct pw_loop *loop, struct spa_source *source, uint64_t interval_ns) {
    struct timespec value = {0, 1}, interval = {(time_t)(interval_ns / 1000000000ull), (long)(interval_ns % 1000000000ull)};
    return pw_loop_update_timer(loop, source, &value, &interval, false);
}

#endif
