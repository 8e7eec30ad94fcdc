# swift-record: the two commands are `make run` and `make test`.
SWIFT      ?= swift
PREFIX     ?= /usr/local
CONFIG     ?= release
BIN        := .build/$(CONFIG)/swift-record
# Release builds carry the Swift runtime and Foundation inside the programs (FFmpeg, X11 and
# PulseAudio stay shared libraries): swift-record starts about 10 ms sooner (16 fewer
# libraries for the dynamic loader) and runs where no Swift toolchain is installed. Every
# release build here and in bench/ passes the same flag, so none rebuilds the others'.
STATIC     := $(if $(filter release,$(CONFIG)),--static-swift-stdlib)
DEMO       ?= demo.mp4
# What runs Swift for make test, docs-check, the sanitizer runs, the leak check and the
# fuzzing: a TMPDIR of their own, removed when each step ends (SwiftPM and Chromium would
# leave folders in /tmp).
IN_TMP     := ./scripts/private-tmp.sh

.PHONY: all deps build run test docs docs-check examples man completions install uninstall clean bench bench-report check-sanitizers check-leaks fuzz

all: build

# System packages (FFmpeg dev libraries, X11, ffmpeg/ffprobe, Xvfb): installed only when missing.
deps:
	@./scripts/install-deps.sh

build: deps
	$(SWIFT) build -c $(CONFIG) $(STATIC) --product swift-record

# Records a 5-second demo with the default source (the screen when DISPLAY is set,
# otherwise the synthetic scene) and prints what ffprobe sees in it.
run: build
	$(BIN) --duration 5 --quiet --overwrite -o $(DEMO)
	@ffprobe -v error -select_streams v:0 -count_frames \
	  -show_entries stream=codec_name,profile,width,height,pix_fmt,r_frame_rate,nb_read_frames:format=duration,bit_rate \
	  -of default=nw=1 $(DEMO) | paste -sd ' ' | sed 's/^/$(DEMO): /'

# Checks that no two folders of the library depend on each other (docs/ARCHITECTURE.md) and
# that AVFrame and AVPacket are allocated and freed only by their owners, `Frame` and
# `Packet`, and CFFmpeg imported only by the folders owning C objects (after showing that
# check fails on a planted call and import), builds everything (library,
# CLI, examples, tests), checks the sanitizer skips and that every test class is in one of
# the groups of scripts/test-groups.txt, checks the documentation and runs the test suite:
# three workers side by side, the classes that mostly wait (on private servers, then the
# CPU-bound conversions; on the clock) beside the CPU-bound ones (scripts/test-workers.sh;
# logs .build/tests-GROUP.log), failing if any fails. The steps that run Swift do so with a
# TMPDIR of their own ($(IN_TMP)).
test: deps
	python3 scripts/folder-graph.py --check
	python3 scripts/check-c-owners.py --self-test
	$(IN_TMP) $(SWIFT) build --build-tests
	SWIFT=$(SWIFT) $(IN_TMP) python3 scripts/check-skips.py
	SWIFT=$(SWIFT) $(IN_TMP) python3 scripts/test-groups.py --check
	$(MAKE) --no-print-directory docs-check
	SWIFT=$(SWIFT) $(IN_TMP) ./scripts/test-workers.sh

# The library's DocC documentation (Sources/SwiftRecord/SwiftRecord.docc and the doc
# comments) as a static website in $(DOCS_DIR): serve that folder with any web server and
# open /documentation/swiftrecord. Any DocC warning (a broken symbol link above all) is an error.
DOCS_DIR := $(CURDIR)/.build/docs/SwiftRecord.doccarchive
DOCC     := $(SWIFT) package --allow-writing-to-directory $(dir $(DOCS_DIR)) generate-documentation \
            --target SwiftRecord --warnings-as-errors --output-path $(DOCS_DIR)
docs: deps
	@mkdir -p $(dir $(DOCS_DIR))
	$(DOCC)
	@echo "docs: open $(DOCS_DIR)/index.html through a web server, e.g."
	@echo "  python3 -m http.server --directory $(DOCS_DIR) 8000   # then http://localhost:8000/documentation/swiftrecord"

# What `make test` runs: the same build, failing on any DocC warning. (The Swift blocks of
# the articles are compiled by Examples/DocSnippets; DocCSnippetTests checks they are all there.)
docs-check:
	@mkdir -p $(dir $(DOCS_DIR))
	$(IN_TMP) $(DOCC)

# The test suite under AddressSanitizer and ThreadSanitizer, the CLI tests against
# sanitized binaries, each suite through make test's workers, two of them side by side: the
# waiting classes (servers, then realtime) beside the CPU-bound ones (cpu with conversions; run as one process,
# the two suites took most of .ci/run's 38 min; three workers, as make test has, starved the
# sanitized real-time camera and PulseAudio checks).
# Leaks are check-leaks' job; tests that hold the recorder to
# wall-clock deadlines are skipped (sanitizers slow it down several times), and so are the
# long real-time checks of timing alone (the A/V sync runs with clocks off, 10 s of streaming, the
# reconnects, a stopped process, a frozen X server, a day-long frame, Ctrl-C within 2 s while the portal's chooser is open,
# a tone's pitch in real time, a replay clip saved while a camera records, a late camera's 90 of 90 frames) and the 13-pair codec x
# container matrix (a minute of encoding and GStreamer decoding): make test runs them; the shorter live-output tests keep those threads under
# the sanitizers.
SANITIZER_SKIP := RecordCommandTests/testRealtimeDurationTakesWallClockTime CrashSafetyTests/testKilledRecordingsArePlayableAndRepairable \
  CrashSafetyTests/testKilledMKVIsPlayable CrashSafetyTests/testDiskFullStopsWithClearErrorAndKeepsWhatWasWritten \
  LiveOutputTests/testStopWhileTheNetworkIsStalledFinishesTheFile LiveOutputTests/testRefusedOrSilentServerIsAClearErrorNotAHang \
  LiveOutputTests/testStreamToNginxRTMPMatchesTheLocalFile LiveOutputTests/testReconnectsAfterTheServerComesBack \
  PulseSyncTests AudioRecordingTests/testRealtimeSyncHoldsPerTrackWithAudioClocksThatRunOffInOppositeWays \
  ConstantRateStallTests FrozenXServerTests SRTReconnectTests \
  ContainerDecodingTests/testALongFrameEndsAtTheStop ContainerDecodingTests/testEveryCodecAndContainerDecodesFinishedKilledAndRepaired \
  WaylandPortalTests/testCtrlCWhileTheChooserIsOpenStopsAtOnce \
  PulseRecordingTests/testDefaultAudioIsTheDefaultSinksMonitorWhenAServerAnswers \
  CameraFaultTests/testReplayClipOfScreenAndCameraStartsEveryTrackOnAKeyFrame CameraFaultTests/testSilentCameraOnASecondTrackIsBlackAndCounted
SANITIZER_WORKERS := servers+realtime cpu+conversions
# Both sanitizers leave out the classes that start the tool many times over only to check
# its rules for arguments, files and messages (one thread each, no untrusted media: make
# test runs them; so do the request rules', the first contact's and the recording plan's,
# in process); they took 1.6 of ASan's 18.5 minutes on a fresh clone here, and the last
# three 57 s of ThreadSanitizer's CPU-bound worker. (The path
# rules' class stays under ASan: its slowness once exposed a race over an output's name.)
# ThreadSanitizer, about twice as slow, also leaves out the path rules', the converter's and
# the container matrix's classes (one thread each; ASan and make test run them, hostile
# input included), which took 7.7 of its 18.5 minutes and kept .ci/run over its 45.
ARGUMENT_SKIP := RecordCommandTests ExitStatusTests FileSafetyTests CommandMessageTests InstallTests ReadmeCommandTests \
  RequestRulesTests FirstContactTests RecordingPlanTests
TSAN_SKIP := WrittenPathTests WrittenPathRuleTests ConvertTests ConvertRefusalTests HostileInputTests ContainerDecodingTests
# Each entry of the three lists is a class or Class/testName (scripts/check-skips.py, run by
# make test, fails when one names nothing); as --skip patterns anchored to the class
# ('\.Class/' or '\.Class/testName$$', matched against 'Target.Class/testName').
skips = $(foreach s,$(1),--skip '\.$(s)$(if $(findstring /,$(s)),$$,/)')
check-sanitizers: deps
	$(IN_TMP) $(SWIFT) build --build-tests --sanitize=address --scratch-path .build-asan
	ASAN_OPTIONS=detect_leaks=0 SWIFT_RECORD_BUILD_DIR=.build-asan/debug TEST_LOG_DIR=.build-asan TEST_WORKERS="$(SANITIZER_WORKERS)" SWIFT=$(SWIFT) $(IN_TMP) ./scripts/test-workers.sh \
	  --sanitize=address --scratch-path .build-asan $(call skips,$(SANITIZER_SKIP) $(ARGUMENT_SKIP))
	$(IN_TMP) $(SWIFT) build --build-tests --sanitize=thread --scratch-path .build-tsan
	TSAN_OPTIONS=halt_on_error=1 SWIFT_RECORD_BUILD_DIR=.build-tsan/debug TEST_LOG_DIR=.build-tsan TEST_WORKERS="$(SANITIZER_WORKERS)" SWIFT=$(SWIFT) $(IN_TMP) ./scripts/test-workers.sh \
	  --sanitize=thread --scratch-path .build-tsan $(call skips,$(SANITIZER_SKIP) $(ARGUMENT_SKIP) $(TSAN_SKIP))

# A 300-frame recording (and a 1000-frame conversion) under LeakSanitizer; fails on
# any leak in swift-record's own code.
check-leaks: deps
	$(IN_TMP) ./scripts/check-leaks.sh

# libFuzzer on the value parsers (and the Y4M parser) for FUZZ_SECONDS each (default 30).
fuzz: deps
	$(IN_TMP) ./fuzz/run.sh

# Benchmarks against the ffmpeg CLI (release build), then the chart and the table in bench/results/README.md.
# BENCH_ARGS picks cases and pairs, e.g. BENCH_ARGS="--cases convert --pairs 7"; the scale curve
# alone: BENCH_ARGS="--cases scale" (add --seconds 3 --scale-sizes 1280x720 for a quick look).
bench: deps
	./scripts/install-bench-deps.sh
	$(SWIFT) build -c release --static-swift-stdlib --product swift-record
	$(SWIFT) build -c release --static-swift-stdlib --product SceneBench
	$(SWIFT) build -c release --static-swift-stdlib --product AllocBench
	./bench/run $(BENCH_ARGS)
	./bench/report

bench-report:
	./scripts/install-bench-deps.sh
	./bench/report

examples: deps
	$(SWIFT) build -c $(CONFIG) $(STATIC) --product SceneRecorder
	$(SWIFT) build -c $(CONFIG) $(STATIC) --product PixelBufferPoolTour
	$(SWIFT) build -c $(CONFIG) $(STATIC) --product YUVToMP4
	$(SWIFT) build -c $(CONFIG) $(STATIC) --product ARSceneRecorder
	$(SWIFT) build -c $(CONFIG) $(STATIC) --product ScreenCaptureWithSound
	$(SWIFT) build -c $(CONFIG) $(STATIC) --product X11GrabRate
	$(SWIFT) build -c $(CONFIG) $(STATIC) --product RosyWriter
	$(SWIFT) build -c $(CONFIG) $(STATIC) --product ReplayKitWriter

# The man page and the bash, zsh and fish completions, generated from the argument
# definitions of the built binary (scripts/make-manpage.py, scripts/make-completions.py),
# so they say what --help says.
SHARE ?= .build/share
man: build
	python3 scripts/make-manpage.py $(BIN) $(SHARE)/swift-record.1
	@echo "man: man -l $(SHARE)/swift-record.1"
completions: build
	python3 scripts/make-completions.py $(BIN) $(SHARE)/completions

# `make install` (PREFIX=/usr/local, DESTDIR for packaging): the binary, the man page and
# the completions where distributions look for them; `make uninstall` removes exactly
# those. SKIP_BUILD=1 installs the $(BIN) already built (the tests do).
INSTALLED := bin/swift-record share/man/man1/swift-record.1 share/bash-completion/completions/swift-record \
             share/zsh/site-functions/_swift-record share/fish/vendor_completions.d/swift-record.fish
install: $(if $(SKIP_BUILD),,build)
	python3 scripts/make-manpage.py $(BIN) $(SHARE)/swift-record.1
	python3 scripts/make-completions.py $(BIN) $(SHARE)/completions
	install -D -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/swift-record
	install -D -m 0644 $(SHARE)/swift-record.1 $(DESTDIR)$(PREFIX)/share/man/man1/swift-record.1
	install -D -m 0644 $(SHARE)/completions/swift-record.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/swift-record
	install -D -m 0644 $(SHARE)/completions/_swift-record $(DESTDIR)$(PREFIX)/share/zsh/site-functions/_swift-record
	install -D -m 0644 $(SHARE)/completions/swift-record.fish $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/swift-record.fish

uninstall:
	rm -f $(addprefix $(DESTDIR)$(PREFIX)/,$(INSTALLED))

clean:
	rm -rf .build .build-asan .build-tsan .build-fuzz $(DEMO)
