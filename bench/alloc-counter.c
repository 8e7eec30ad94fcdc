// Counts heap allocations for bench/AllocBench (LD_PRELOAD=alloc-counter.so): every
// malloc-family call, and apart from them the calls made while no FFmpeg encoder or
// muxer call is running on the thread (avcodec_send_frame, avcodec_receive_packet,
// av_interleaved_write_frame, av_write_frame are wrapped here to mark that). What FFmpeg
// allocates inside an encode or a write is its own (a packet's buffer, the interleaving
// queue); what is left is swift-record's. Built by bench/run with the system's cc; not
// part of any product.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static uint64_t total, outside;
static __thread int inside_ffmpeg;

static inline void count(void) {
    __atomic_fetch_add(&total, 1, __ATOMIC_RELAXED);
    if (!inside_ffmpeg) __atomic_fetch_add(&outside, 1, __ATOMIC_RELAXED);
}

void *malloc(size_t n) { count(); return __libc_malloc(n); }
void *calloc(size_t a, size_t b) { count(); return __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { count(); return __libc_realloc(p, n); }
void *memalign(size_t a, size_t n) { count(); return __libc_memalign(a, n); }
void *aligned_alloc(size_t a, size_t n) { count(); return __libc_memalign(a, n); }
int posix_memalign(void **out, size_t a, size_t n) {
    count();
    void *p = __libc_memalign(a, n);
    if (!p) return 12; /* ENOMEM */
    *out = p;
    return 0;
}

/// Allocations so far: all, and those outside FFmpeg's encode and write calls.
uint64_t sr_bench_allocations_total(void) { return __atomic_load_n(&total, __ATOMIC_RELAXED); }
uint64_t sr_bench_allocations_outside_ffmpeg(void) { return __atomic_load_n(&outside, __ATOMIC_RELAXED); }

#define WRAP(ret, name, params, args)                                   \
    ret name params {                                                   \
        static ret (*real) params;                                      \
        if (!real) real = (ret (*) params)dlsym(RTLD_NEXT, #name);      \
        inside_ffmpeg++;                                                \
        ret r = real args;                                              \
        inside_ffmpeg--;                                                \
        return r;                                                       \
    }

struct AVCodecContext; struct AVFrame; struct AVPacket; struct AVFormatContext;
WRAP(int, avcodec_send_frame, (struct AVCodecContext *c, const struct AVFrame *f), (c, f))
WRAP(int, avcodec_receive_packet, (struct AVCodecContext *c, struct AVPacket *p), (c, p))
WRAP(int, av_interleaved_write_frame, (struct AVFormatContext *s, struct AVPacket *p), (s, p))
WRAP(int, av_write_frame, (struct AVFormatContext *s, struct AVPacket *p), (s, p))
