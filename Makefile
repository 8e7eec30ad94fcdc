# swift-record: the two commands are `make run` and `make test`.
SWIFT      ?= swift
PREFIX     ?= /usr/local
CONFIG     ?= release
BIN        := .build/$(CONFIG)/swift-record
DEMO       ?= demo.mp4

.PHONY: all deps build run test examples install uninstall clean bench

all: build

# System packages (FFmpeg dev libraries, X11, ffmpeg/ffprobe, Xvfb): installed only when missing.
deps:
	@./scripts/install-deps.sh

build: deps
	$(SWIFT) build -c $(CONFIG) --product swift-record

# Records a 5-second demo with the default source (the screen when DISPLAY is set,
# otherwise the synthetic scene) and prints what ffprobe sees in it.
run: build
	$(BIN) --duration 5 --quiet -o $(DEMO)
	@ffprobe -v error -select_streams v:0 -count_frames \
	  -show_entries stream=codec_name,profile,width,height,pix_fmt,r_frame_rate,nb_read_frames:format=duration,bit_rate \
	  -of default=nw=1 $(DEMO) | paste -sd ' ' | sed 's/^/$(DEMO): /'

# Builds everything (library, CLI, examples, tests) and runs the test suite.
test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

examples: deps
	$(SWIFT) build -c $(CONFIG) --product SceneRecorder
	$(SWIFT) build -c $(CONFIG) --product PixelBufferPoolTour

install: build
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/swift-record

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/swift-record

clean:
	rm -rf .build $(DEMO)
