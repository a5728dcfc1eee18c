# jobd: build release binaries and install them with their systemd unit.
# docs/operations.md explains the steps around it.
#
#   make                      build jobd and jobctl (release, Swift runtime linked in)
#   sudo make install         build, then install under PREFIX (default /usr/local)
#   make install DESTDIR=DIR  the same into a staging root
#   make install-files        install binaries already built (BUILT=DIR to name them)
#   sudo make uninstall       remove what install put there; data stays
#   make check-unit           systemd-analyze verify + security on the unit
#   make test                 install what the tests need (scripts/test-deps), then every test
#                             on an optimised build (TEST_FLAGS)
#   make bench                every benchmark, quick, in one table; fails on a missed target
#                             (BENCH_FLAGS=--full for full runs; scripts/bench says more)
#   make lint                 swift-format lint of the sources, tests and benchmarks
#                             (.swift-format); fails on any finding

PREFIX  ?= /usr/local
DESTDIR ?=
BINDIR  ?= $(PREFIX)/bin
DATADIR ?= $(PREFIX)/share
MANDIR  ?= $(DATADIR)/man
DOCDIR  ?= $(DATADIR)/doc/jobd
# Shipped copies of the configuration and example definitions, the network
# and HTTP drop-ins: always installed here, whatever is in /etc/jobd.
EXAMPLEDIR ?= $(DATADIR)/jobd

# systemd reads units, sysusers.d and tmpfiles.d under /usr/lib and
# /usr/local/lib, never under another prefix: use /etc for those.
ifneq ($(filter /usr /usr/local,$(PREFIX)),)
UNITDIR     ?= $(PREFIX)/lib/systemd/system
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
TMPFILESDIR ?= $(PREFIX)/lib/tmpfiles.d
else
UNITDIR     ?= /etc/systemd/system
SYSUSERSDIR ?= /etc/sysusers.d
TMPFILESDIR ?= /etc/tmpfiles.d
endif
BASHCOMPDIR ?= $(DATADIR)/bash-completion/completions
# Debian's zsh searches /usr/share/zsh/vendor-completions for packaged files
# and /usr/local/share/zsh/site-functions for local ones.
ifeq ($(PREFIX),/usr)
ZSHCOMPDIR  ?= $(DATADIR)/zsh/vendor-completions
else
ZSHCOMPDIR  ?= $(DATADIR)/zsh/site-functions
endif
FISHCOMPDIR ?= $(DATADIR)/fish/vendor_completions.d

# The unit and jobctl find the configuration in /etc/jobd (the unit's
# ConfigurationDirectory=jobd), whatever the prefix.
CONFDIR := /etc/jobd

SWIFT       ?= $(firstword $(shell command -v swift 2>/dev/null) /opt/swift/usr/bin/swift)
# The toolchain's formatter (.swift-format holds its settings).
SWIFT_FORMAT ?= $(firstword $(shell command -v swift-format 2>/dev/null) /opt/swift/usr/bin/swift-format)
SWIFT_FLAGS ?= -c release --static-swift-stdlib
# Where the binaries to install are; asked of swift build when not given.
BUILT       ?= $(shell $(SWIFT) build $(SWIFT_FLAGS) --show-bin-path)
# scripts/generate-cli-docs writes completions and man pages here.
CLIDOCS     := .build/cli-docs

INSTALL := install

.PHONY: all build install install-files install-binaries install-systemd install-config \
        install-cli-docs install-docs uninstall check-unit test test-deps print-test-flags bench lint

# The README's test command: Debian packages and a Python virtualenv the
# tests compare against (scripts/test-deps says which), then every test.
# The tests run on an optimised build (TEST_FLAGS): the code as it ships,
# plus -enable-testing for the tests' @testable imports and JOBD_TEST_HOOKS
# for the fault tests' hooks (PostgresFreezeHook). Built first, then run
# with --skip-build: `swift test` adds flags of its own and would compile
# everything again. CI uses the same build for the systemd checks (.ci/run);
# `swift test` alone still runs the tests on a debug build.
# At most 8 tests at once: the suites start real jobds, PostgreSQL servers
# and Chromium, and with every suite at once on two cores a test waits
# tens of seconds for a thread (the whole run takes about 2.5 min this way
# on the optimised build, 4 on a debug one; a little less unbounded, but
# then load alone can outlast a test's bound).
TEST_FLAGS ?= -c release -Xswiftc -enable-testing -Xswiftc -DJOBD_TEST_HOOKS
TEST_WIDTH ?= 8
test: test-deps
	$(SWIFT) build $(TEST_FLAGS) --build-tests
	$(SWIFT) test $(TEST_FLAGS) --skip-build --experimental-maximum-parallelization-width $(TEST_WIDTH)

test-deps:
	scripts/test-deps

# The flags of the test build, for CI's later steps that reuse it.
print-test-flags:
	@echo $(TEST_FLAGS)

# Builds the benchmarks in release and runs them (scripts/bench): one table
# of every figure beside its target; exits non-zero when one misses.
BENCH_FLAGS ?=
bench:
	SWIFT="$(SWIFT)" scripts/bench $(BENCH_FLAGS)

# Every finding is an error: `$(SWIFT_FORMAT) format -i -r …` fixes what it can.
lint:
	$(SWIFT_FORMAT) lint --strict --parallel --recursive Package.swift Sources Tests Benchmarks

all: build

build:
	$(SWIFT) build $(SWIFT_FLAGS) --product jobd
	$(SWIFT) build $(SWIFT_FLAGS) --product jobctl

install: build
	$(MAKE) --no-print-directory install-files

install-files: install-binaries install-systemd install-config install-cli-docs install-docs
	@echo "Installed into $(DESTDIR)/. Next (docs/operations.md): systemd-sysusers," \
	      "systemd-tmpfiles --create, systemctl daemon-reload, systemctl enable --now jobd"

install-binaries:
	@for binary in jobd jobctl; do \
	    [ -x "$(BUILT)/$$binary" ] || { echo "error: $(BUILT)/$$binary does not exist: run make build (or give BUILT=DIR)" >&2; exit 1; }; \
	done
	$(INSTALL) -d $(DESTDIR)$(BINDIR)
	$(INSTALL) -m 755 $(BUILT)/jobd $(BUILT)/jobctl $(DESTDIR)$(BINDIR)/

# The unit in the repository names /usr/local; other prefixes get their paths.
install-systemd:
	$(INSTALL) -d $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSUSERSDIR) $(DESTDIR)$(TMPFILESDIR)
	sed -e 's|/usr/local/bin/jobd|$(BINDIR)/jobd|' -e 's|/usr/local/share/doc/jobd|$(DOCDIR)|' \
	    systemd/jobd.service > $(DESTDIR)$(UNITDIR)/jobd.service.tmp
	@grep -q '^ExecStart=$(BINDIR)/jobd ' $(DESTDIR)$(UNITDIR)/jobd.service.tmp || \
	    { echo "error: no ExecStart=$(BINDIR)/jobd in the generated unit (systemd/jobd.service changed?)" >&2; \
	      rm -f $(DESTDIR)$(UNITDIR)/jobd.service.tmp; exit 1; }
	chmod 644 $(DESTDIR)$(UNITDIR)/jobd.service.tmp
	mv -f $(DESTDIR)$(UNITDIR)/jobd.service.tmp $(DESTDIR)$(UNITDIR)/jobd.service
	$(INSTALL) -m 644 systemd/jobd.sysusers $(DESTDIR)$(SYSUSERSDIR)/jobd.conf
	$(INSTALL) -m 644 systemd/jobd.tmpfiles $(DESTDIR)$(TMPFILESDIR)/jobd.conf

# /etc/jobd/jobd.yaml and /etc/jobd/jobs.d are the administrator's: written
# only when absent. The shipped versions always land in $(EXAMPLEDIR).
install-config:
	$(INSTALL) -d $(DESTDIR)$(EXAMPLEDIR)/jobs.d
	$(INSTALL) -m 644 config/jobd.production.yaml $(DESTDIR)$(EXAMPLEDIR)/jobd.yaml
	$(INSTALL) -m 644 config/jobs.d/*.yaml $(DESTDIR)$(EXAMPLEDIR)/jobs.d/
	$(INSTALL) -m 644 systemd/network.conf.example systemd/http.conf.example systemd/postgres.conf.example $(DESTDIR)$(EXAMPLEDIR)/
	$(INSTALL) -d -m 755 $(DESTDIR)$(CONFDIR)
	@if [ -e $(DESTDIR)$(CONFDIR)/jobd.yaml ]; then \
	    echo "kept $(DESTDIR)$(CONFDIR)/jobd.yaml; the shipped one is $(EXAMPLEDIR)/jobd.yaml"; \
	else \
	    echo "$(INSTALL) -m 644 config/jobd.production.yaml $(DESTDIR)$(CONFDIR)/jobd.yaml"; \
	    $(INSTALL) -m 644 config/jobd.production.yaml $(DESTDIR)$(CONFDIR)/jobd.yaml; \
	fi
	@if [ -e $(DESTDIR)$(CONFDIR)/jobs.d ]; then \
	    echo "kept $(DESTDIR)$(CONFDIR)/jobs.d; the examples are in $(EXAMPLEDIR)/jobs.d"; \
	else \
	    echo "$(INSTALL) -m 644 config/jobs.d/*.yaml $(DESTDIR)$(CONFDIR)/jobs.d/"; \
	    $(INSTALL) -d -m 755 $(DESTDIR)$(CONFDIR)/jobs.d && \
	    $(INSTALL) -m 644 config/jobs.d/*.yaml $(DESTDIR)$(CONFDIR)/jobs.d/; \
	fi

# Shell completions and man pages, generated from the built binaries'
# command definitions by scripts/generate-cli-docs.
install-cli-docs:
	rm -rf $(CLIDOCS)
	PATH="$(dir $(SWIFT)):$$PATH" scripts/generate-cli-docs $(CLIDOCS) $(BUILT)/jobctl $(BUILT)/jobd
	$(INSTALL) -d $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(FISHCOMPDIR) $(DESTDIR)$(MANDIR)/man1
	$(INSTALL) -m 644 $(CLIDOCS)/completions/jobctl.bash $(DESTDIR)$(BASHCOMPDIR)/jobctl
	$(INSTALL) -m 644 $(CLIDOCS)/completions/_jobctl $(DESTDIR)$(ZSHCOMPDIR)/_jobctl
	$(INSTALL) -m 644 $(CLIDOCS)/completions/jobctl.fish $(DESTDIR)$(FISHCOMPDIR)/jobctl.fish
	$(INSTALL) -m 644 $(CLIDOCS)/man/jobctl.1 $(CLIDOCS)/man/jobd.1 $(DESTDIR)$(MANDIR)/man1/

install-docs:
	$(INSTALL) -d $(DESTDIR)$(DOCDIR)
	$(INSTALL) -m 644 docs/*.md $(DESTDIR)$(DOCDIR)/

# Leaves /var/lib/jobd alone, and of /etc/jobd removes only files still
# identical to the shipped ones (and then the folders, if empty).
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/jobd $(DESTDIR)$(BINDIR)/jobctl
	rm -f $(DESTDIR)$(UNITDIR)/jobd.service $(DESTDIR)$(SYSUSERSDIR)/jobd.conf $(DESTDIR)$(TMPFILESDIR)/jobd.conf
	rm -f $(DESTDIR)$(BASHCOMPDIR)/jobctl $(DESTDIR)$(ZSHCOMPDIR)/_jobctl $(DESTDIR)$(FISHCOMPDIR)/jobctl.fish
	rm -f $(DESTDIR)$(MANDIR)/man1/jobctl.1 $(DESTDIR)$(MANDIR)/man1/jobd.1
	rm -rf $(DESTDIR)$(EXAMPLEDIR) $(DESTDIR)$(DOCDIR)
	@if cmp -s config/jobd.production.yaml $(DESTDIR)$(CONFDIR)/jobd.yaml; then \
	    echo "rm -f $(DESTDIR)$(CONFDIR)/jobd.yaml"; rm -f $(DESTDIR)$(CONFDIR)/jobd.yaml; \
	fi
	@for example in config/jobs.d/*.yaml; do \
	    installed=$(DESTDIR)$(CONFDIR)/jobs.d/$${example##*/}; \
	    if cmp -s "$$example" "$$installed"; then echo "rm -f $$installed"; rm -f "$$installed"; fi; \
	done
	@for folder in $(DESTDIR)$(CONFDIR)/jobs.d $(DESTDIR)$(CONFDIR); do \
	    if [ -d "$$folder" ]; then rmdir --ignore-fail-on-non-empty "$$folder"; fi; \
	done
	@if [ -e $(DESTDIR)$(CONFDIR) ]; then echo "kept $(DESTDIR)$(CONFDIR): it holds files you changed or added"; fi
	@echo "kept /var/lib/jobd (the database) and user jobd. Then: systemctl daemon-reload"

# The unit as installed, checked by systemd-analyze against this machine's
# systemd: `verify` must print nothing (it exits 0 on warnings), the sandbox
# must score 1.0 or better, and the unit with each drop-in (network.conf,
# http.conf, postgres.conf) must verify too (their scores are printed). ExecStart must exist
# for verify: the staged copy points at the staged binary.
check-unit: build
	@set -e; \
	stage=$$(mktemp -d); trap 'rm -rf "$$stage"' EXIT; \
	$(MAKE) --no-print-directory install-binaries install-systemd install-config \
	    DESTDIR="$$stage" BUILT="$(BUILT)" > /dev/null; \
	mkdir -p "$$stage/units/jobd.service.d"; \
	sed 's|^ExecStart=$(BINDIR)/|ExecStart='"$$stage"'$(BINDIR)/|' "$$stage$(UNITDIR)/jobd.service" \
	    > "$$stage/units/jobd.service"; \
	verify() { \
	    SYSTEMD_UNIT_PATH="$$stage/units:" systemd-analyze verify --man=no jobd.service > "$$stage/verify.out" 2>&1 \
	        && [ ! -s "$$stage/verify.out" ] \
	        || { cat "$$stage/verify.out" >&2; echo "FAIL: systemd-analyze verify jobd.service $$1" >&2; exit 1; }; \
	    echo "PASS: systemd-analyze verify jobd.service $$1: no output"; \
	}; \
	verify "(alone)"; \
	SYSTEMD_UNIT_PATH="$$stage/units:" systemd-analyze security --offline=yes --threshold=10 jobd.service \
	    > "$$stage/security.out" 2>&1 || { cat "$$stage/security.out" >&2; echo "FAIL: security above 1.0" >&2; exit 1; }; \
	echo "PASS: $$(grep 'Overall exposure level' "$$stage/security.out")"; \
	for dropin in network http postgres; do \
	    rm -f "$$stage/units/jobd.service.d/"*; \
	    cp systemd/$$dropin.conf.example "$$stage/units/jobd.service.d/$$dropin.conf"; \
	    verify "+ $$dropin.conf"; \
	    SYSTEMD_UNIT_PATH="$$stage/units:" systemd-analyze security --offline=yes jobd.service 2>&1 \
	        | sed -n "s/^→ /with $$dropin.conf: /p"; \
	done
