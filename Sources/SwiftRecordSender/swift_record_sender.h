/*
 * swift-record's broadcast sender for C, C++ and Rust: hand pictures and sound to a
 * recorder started with `swift-record --source broadcast:NAME`, without an encoder.
 *
 * Link with -lSwiftRecordSender (the shared library the package builds). Pictures are
 * yuv420p in buffers the recorder allocated and shared: take one, draw into its three
 * planes, send it with its time; only its index crosses the socket. Times are nanoseconds on
 * CLOCK_MONOTONIC (srs_now_ns). No call blocks a render loop: with no free buffer,
 * srs_next_picture returns 0 and the frame is counted as dropped. Once the recorder has
 * gone, every call fails at once (-1) and srs_last_error says why; SIGPIPE is never raised.
 */
#ifndef SWIFT_RECORD_SENDER_H
#define SWIFT_RECORD_SENDER_H
#include <stddef.h>
#include <stdint.h>
#ifdef __cplusplus
extern "C" {
#endif

typedef struct srs_sender srs_sender;

/* A shared picture buffer lent to the sender. */
typedef struct {
    uint8_t *planes[3];   /* Y, U, V */
    int32_t strides[3];   /* bytes from one row to the next, per plane */
    int32_t index;        /* which buffer of the ring (pass the struct back unchanged) */
} srs_picture;

enum { SRS_SOUND_APP = 1, SRS_SOUND_MIC = 2 };

/* Connects to the recorder called `name` and waits (up to 30 s) until it records. NULL on
 * failure, with the reason in `error` (`error_size` bytes, may be NULL). */
srs_sender *srs_connect(const char *name, int32_t width, int32_t height, int32_t fps_num, int32_t fps_den,
                        int32_t sample_rate, int32_t channels, char *error, size_t error_size);
/* 1: `picture` is a free buffer to draw into; 0: none free (the frame is dropped, counted); -1: error. */
int srs_next_picture(srs_sender *sender, srs_picture *picture);
/* Sends a buffer from srs_next_picture, presented at `time_ns`. 0, or -1. */
int srs_send_picture(srs_sender *sender, const srs_picture *picture, int64_t time_ns);
/* Sends `frames` frames of interleaved 16-bit sound of the connection's channels. 0, or -1. */
int srs_send_sound(srs_sender *sender, int kind, const int16_t *samples, int32_t frames, int64_t time_ns);
/* The broadcast pauses (ReplayKit's broadcastPaused) and resumes: the recorder pauses its
 * recording from the pictures sent before to those sent after, without a gap. 0, or -1. */
int srs_pause(srs_sender *sender);
int srs_resume(srs_sender *sender);
/* Frames dropped for want of a free buffer. */
int64_t srs_dropped_frames(srs_sender *sender);
/* Why the last call failed (valid until the next call on `sender`). */
const char *srs_last_error(srs_sender *sender);
/* Says the broadcast is over (the recorder finishes its file), closes and frees. */
int srs_close(srs_sender *sender);
/* CLOCK_MONOTONIC in nanoseconds. */
int64_t srs_now_ns(void);

#ifdef __cplusplus
}
#endif
#endif
