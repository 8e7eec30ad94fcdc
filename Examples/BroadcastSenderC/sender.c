/*
 * A broadcast sender in C: flat pictures whose brightness steps with the frame number
 * (luma 16 + 7n mod 200, so every frame can be told from its neighbours in the file) and a
 * 440 Hz app tone, sent to `swift-record --source broadcast:NAME`.
 *
 *   cc sender.c -I ../../Sources/SwiftRecordSender -L BUILD -lSwiftRecordSender -Wl,-rpath,BUILD -lm -o sender
 *   ./sender NAME WIDTH HEIGHT FRAMES
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "swift_record_sender.h"

static void sleep_until(int64_t ns) {
    int64_t now = srs_now_ns();
    if (ns <= now) return;
    struct timespec t = { (ns - now) / 1000000000, (ns - now) % 1000000000 };
    nanosleep(&t, NULL);
}

int main(int argc, char **argv) {
    if (argc != 5) { fprintf(stderr, "usage: sender NAME WIDTH HEIGHT FRAMES\n"); return 2; }
    int width = atoi(argv[2]), height = atoi(argv[3]), frames = atoi(argv[4]);
    char error[512];
    srs_sender *s = srs_connect(argv[1], width, height, 30, 1, 48000, 1, error, sizeof error);
    if (!s) { fprintf(stderr, "sender: %s\n", error); return 1; }
    int64_t start = srs_now_ns() + 20000000, frame_ns = 1000000000 / 30;
    int16_t tone[1600];
    long sample = 0;
    int sent = 0;
    for (int n = 0; n < frames; n++) {
        int64_t due = start + n * frame_ns;
        /* One frame's worth of sound (1600 samples at 48 kHz), stamped at its first sample. */
        for (int i = 0; i < 1600; i++) tone[i] = (int16_t)(3276.0 * sin(2 * M_PI * 440.0 * (double)(sample + i) / 48000.0));
        if (srs_send_sound(s, SRS_SOUND_APP, tone, 1600, start + sample * 1000000000LL / 48000) != 0) {
            fprintf(stderr, "sender: %s\n", srs_last_error(s));
            return 1;
        }
        sample += 1600;
        srs_picture p;
        int got = srs_next_picture(s, &p);
        if (got < 0) { fprintf(stderr, "sender: %s\n", srs_last_error(s)); return 1; }
        if (got == 1) {
            for (int y = 0; y < height; y++) memset(p.planes[0] + (size_t)y * p.strides[0], 16 + (n * 7) % 200, (size_t)width);
            for (int c = 1; c < 3; c++)
                for (int y = 0; y < height / 2; y++) memset(p.planes[c] + (size_t)y * p.strides[c], 128, (size_t)width / 2);
            if (srs_send_picture(s, &p, due) != 0) { fprintf(stderr, "sender: %s\n", srs_last_error(s)); return 1; }
            sent++;
        }
        sleep_until(due + frame_ns);
    }
    printf("sent %d frames, dropped %lld\n", sent, (long long)srs_dropped_frames(s));
    return srs_close(s) == 0 ? 0 : 1;
}
