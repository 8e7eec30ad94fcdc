// The only place FFmpeg's macros are touched: Swift cannot import function-like
// macros or macros that expand to casts, so each one used is wrapped here once.
#ifndef SWIFT_RECORD_CFFMPEG_SHIM_H
#define SWIFT_RECORD_CFFMPEG_SHIM_H

#include <errno.h>
#include <stdint.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
// libavdevice is not linked: it brings libavfilter, SDL2, JACK, OpenAL, libcdio,
// libdc1394 and some 60 more libraries into every run. Its one function used,
// avdevice_register_all, is looked up when a V4L2 camera is opened (FFmpegDevices); only
// its version is read here, for the library's name.
#include <libavdevice/version_major.h>
#include <libavutil/avutil.h>
#include <libavutil/display.h>
#include <libavutil/imgutils.h>
#include <libavutil/mathematics.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>
#include <libswresample/swresample.h>
#include <libavutil/channel_layout.h>
#include <libavutil/samplefmt.h>
#include <libavutil/audio_fifo.h>
#include <sys/prctl.h>

// prctl is variadic, which Swift cannot call. Asks the kernel to back this process's
// memory (and its children's) with regular pages only; -1 with errno where it cannot.
static inline int sr_disable_transparent_huge_pages(void) {
#ifdef PR_SET_THP_DISABLE
    return prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
#else
    errno = ENOSYS;
    return -1;
#endif
}
static inline int sr_transparent_huge_pages_disabled(void) {
#ifdef PR_GET_THP_DISABLE
    return prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0);
#else
    return 0;
#endif
}

// The major version of the libavdevice that matches these headers (its file libavdevice.so.59).
static inline int sr_avdevice_major(void) { return LIBAVDEVICE_VERSION_MAJOR; }

static inline int sr_error_again(void) { return AVERROR(EAGAIN); }
static inline int sr_error_eof(void) { return AVERROR_EOF; }
static inline int sr_error_exit(void) { return AVERROR_EXIT; }
static inline int sr_error_from_errno(int e) { return AVERROR(e); }
static inline int64_t sr_nopts_value(void) { return AV_NOPTS_VALUE; }
static inline int sr_codec_flag_global_header(void) { return AV_CODEC_FLAG_GLOBAL_HEADER; }
static inline int sr_format_flag_global_header(void) { return AVFMT_GLOBALHEADER; }
static inline int sr_format_flag_nofile(void) { return AVFMT_NOFILE; }
static inline int sr_io_flag_write(void) { return AVIO_FLAG_WRITE; }
static inline int sr_avseek_size(void) { return AVSEEK_SIZE; }
static inline int sr_avseek_force(void) { return AVSEEK_FORCE; }
static inline int sr_pix_fmt_flag_rgb(void) { return AV_PIX_FMT_FLAG_RGB; }
static inline int sr_sws_bilinear(void) { return SWS_BILINEAR; }
static inline int sr_sws_bicubic(void) { return SWS_BICUBIC; }
static inline int sr_sws_point(void) { return SWS_POINT; }
static inline int sr_sws_cs_itu709(void) { return SWS_CS_ITU709; }
static inline int sr_codec_cap_variable_frame_size(void) { return AV_CODEC_CAP_VARIABLE_FRAME_SIZE; }
static inline int sr_codec_cap_small_last_frame(void) { return AV_CODEC_CAP_SMALL_LAST_FRAME; }
static inline int sr_swr_flag_resample(void) { return SWR_FLAG_RESAMPLE; }
static inline int sr_sws_cs_itu601(void) { return SWS_CS_ITU601; }
static inline int sr_sws_cs_bt2020(void) { return SWS_CS_BT2020; }
static inline int sr_log_quiet(void) { return AV_LOG_QUIET; }
static inline int sr_log_fatal(void) { return AV_LOG_FATAL; }
static inline int sr_log_trace(void) { return AV_LOG_TRACE; }
static inline int sr_log_error(void) { return AV_LOG_ERROR; }
static inline int sr_log_warning(void) { return AV_LOG_WARNING; }
static inline int sr_log_info(void) { return AV_LOG_INFO; }
static inline int sr_log_verbose(void) { return AV_LOG_VERBOSE; }
static inline int sr_log_debug(void) { return AV_LOG_DEBUG; }
static inline int sr_pkt_flag_corrupt(void) { return AV_PKT_FLAG_CORRUPT; }
static inline int sr_dict_ignore_suffix(void) { return AV_DICT_IGNORE_SUFFIX; }
static inline int sr_pkt_flag_key(void) { return AV_PKT_FLAG_KEY; }
static inline int sr_pkt_flag_discard(void) { return AV_PKT_FLAG_DISCARD; }
static inline int sr_seek_flag_backward(void) { return AVSEEK_FLAG_BACKWARD; }
static inline int sr_input_buffer_padding_size(void) { return AV_INPUT_BUFFER_PADDING_SIZE; }

/// Pointer to element i of AVFrame.data / linesize: Swift sees those arrays as tuples.
static inline uint8_t *sr_frame_data(const AVFrame *f, int i) { return f->data[i]; }
static inline int sr_frame_linesize(const AVFrame *f, int i) { return f->linesize[i]; }
static inline uint8_t **sr_frame_data_array(AVFrame *f) { return f->data; }
static inline int *sr_frame_linesize_array(AVFrame *f) { return f->linesize; }
static inline const uint8_t *const *sr_frame_const_data_array(const AVFrame *f) { return (const uint8_t *const *)f->data; }
static inline AVBufferRef *sr_frame_buf(const AVFrame *f, int i) { return f->buf[i]; }
static inline void sr_frame_set_buf(AVFrame *f, int i, AVBufferRef *b) { f->buf[i] = b; }

// A frame that borrows another's planes for one avcodec_send_frame, which takes its own
// references to the buffers: pointers and picture properties copied, no reference taken.
// sr_frame_end_borrow forgets the borrowed buffers (never unreferenced here) and resets
// the frame for the next borrow.
static inline void sr_frame_borrow(AVFrame *dst, const AVFrame *src) {
    for (int i = 0; i < AV_NUM_DATA_POINTERS; i++) {
        dst->data[i] = src->data[i];
        dst->linesize[i] = src->linesize[i];
        dst->buf[i] = src->buf[i];
    }
    dst->extended_data = dst->data;
    dst->width = src->width;
    dst->height = src->height;
    dst->format = src->format;
    dst->sample_aspect_ratio = src->sample_aspect_ratio;
    dst->color_range = src->color_range;
    dst->color_primaries = src->color_primaries;
    dst->color_trc = src->color_trc;
    dst->colorspace = src->colorspace;
    dst->chroma_location = src->chroma_location;
}
static inline void sr_frame_end_borrow(AVFrame *dst) {
    for (int i = 0; i < AV_NUM_DATA_POINTERS; i++) { dst->buf[i] = NULL; dst->data[i] = NULL; }
    av_frame_unref(dst);
}

static inline const AVComponentDescriptor *sr_pix_desc_comp(const AVPixFmtDescriptor *d, int i) { return &d->comp[i]; }


// av_log's callback takes a va_list, which a Swift closure cannot (@convention(c) has no
// va_list on Linux): this one formats the line as FFmpeg's default callback does and hands
// it to the library's logger, `swift_record_ffmpeg_log`, a Swift function (@_cdecl).
extern void swift_record_ffmpeg_log(int level, const char *line);
static inline void sr_ffmpeg_log_callback(void *context, int level, const char *format, va_list arguments) {
    if (level > av_log_get_level()) return;
    char line[1024];
    int print_prefix = 1;
    if (av_log_format_line2(context, level, format, arguments, line, (int)sizeof line, &print_prefix) < 0) return;
    swift_record_ffmpeg_log(level, line);
}
static inline void sr_route_ffmpeg_log(int level) {
    av_log_set_level(level);
    av_log_set_callback(sr_ffmpeg_log_callback);
}

#endif
