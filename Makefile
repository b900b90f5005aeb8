# SPDX-License-Identifier: GPL-2.0
#
# softrc: build the module, run the tests, show the demo.
#
#   make              build drivers/infiniband/sw/softrc/softrc.ko
#   make check        every test suite (host and VM); one summary line
#   make check-debug  the VM suites and interop on a KASAN/lockdep/kmemleak
#                     kernel built from linux-source-6.1 (cached; the first
#                     build takes about an hour on 2 cores)
#   make demo         boot the VM, create devices, show them
#   make style        checkpatch --strict on our sources; kernel version
#                     tests only in compat.h (tools/testing/compat-check.sh)
#                     and the module sees the engine through core/engine.h
#                     alone (tools/testing/engine-check.sh)
#   make sparse       sparse (C=2) with endian checks
#   make fuzz | coverage | bench-core   protocol core on the host
#   make bench        perftest on softrc and on rxe (one VM boot each), ratios,
#                     and the cost curves (size, QPs, latency percentiles,
#                     kernel memory per QP) as tables and build/bench/*.svg,
#                     NVMe-oF IOPS, and rdma_cm setup and teardown at 1024
#                     connections (bench-cm)
#   make bench-profile  where a message's instructions go, stage by stage,
#                     on softrc and on rxe (perf in the VM, icount clock)
#   make bench-cm     rdma_cm connection setup and teardown time per
#                     connection at CMSCALE_NS (default 64 256 1024)
#                     concurrent connections, softrc and rxe (one VM boot each)
#   make install      softrc.ko into /lib/modules/KREL/updates, depmod, and
#                     softrc-links (links at boot); make uninstall undoes it
#   make dkms-install the module as a DKMS package (rebuilt for every new
#                     6.1 or 6.12 kernel), and softrc-links; make dkms-uninstall
#   make soak         SOAK_MINUTES=N (default 20) of rc_verify on 64 RC
#                     connections under netem, QPs and devices re-created,
#                     then a one-screen summary; then SOAK_CM_MINUTES=N
#                     (default 10) of rdma_cm cycles (cm_verify, 256
#                     connections set up, verified, torn down, again),
#                     checked for leaks and stuck connections; 0 skips
#                     either (not part of check)
#
# KVER selects the kernel series (tools/setup/kernel.sh list): 6.1, the
# default, or 6.12. It picks the kernel the module is built for, the guest
# kernel of the VM targets (check-vm, check-interop, soak) and, through
# CHECK_KVERS, the kernels `make check` runs the VM suites on:
#   make KVER=6.12            softrc.ko and the test modules for 6.12, built
#                             from copies in build/6.12/mod and build/6.12/kmod
#                             (tools/testing/build-modules.sh); the tree's own
#                             build output stays 6.1's
#   make check-vm KVER=6.12   the VM suites in a 6.12 guest with those modules;
#                             results build/results/vm-6.12.ktap (6.1's keep
#                             their names, vm.ktap)
#   make check-interop KVER=6.12   interop, both guests on 6.12 (results
#                             interop-6.12.ktap)
#   make check-interop-cross  interop, softrc on 6.1 against softrc on 6.12
#                             (results interop-cross.ktap; part of make
#                             check when CHECK_KVERS has both)
#   make check CHECK_KVERS="6.1 6.12"   check-vm and check-interop once per
#                             listed kernel, one summary (default: 6.1 and,
#                             with the suites CHECK_SUITES_6.12, 6.12)
#   make check-vm VM_SUITES="a.sh b.sh"   only those VM suites
#
# KDIR selects the kernel build tree. For 6.1: the running kernel's if it
# has one, else Debian 12's 6.1.0-57-amd64 headers (installed if missing);
# for another series its headers (tools/setup/kernel.sh SERIES kdir,
# extracted under ~/.cache/softrc).
SHELL		:= /bin/bash
KVERS		:= $(shell $(CURDIR)/tools/setup/kernel.sh list)
# A KVER in the environment that is no series is not ours (the VM suites
# export the running kernel's release under that name) and is ignored.
ifeq ($(origin KVER),environment)
ifeq ($(filter $(KVER),$(KVERS)),)
KVER		:= 6.1
endif
endif
KVER		?= 6.1
ifneq ($(words $(KVER)),1)
$(error KVER must be one kernel series ($(KVERS)), not "$(KVER)")
endif
ifeq ($(filter $(KVER),$(KVERS)),)
$(error KVER=$(KVER) is not a supported kernel series ($(KVERS)))
endif
KVER_DEBIAN	:= 6.1.0-57-amd64
ifeq ($(KVER),6.1)
KDIR		?= $(firstword $(wildcard /lib/modules/$(shell uname -r)/build) \
			/usr/src/linux-headers-$(KVER_DEBIAN))
else ifndef KDIR
KDIR		:= $(shell $(CURDIR)/tools/setup/kernel.sh $(KVER) kdir)
endif
TOP		:= $(CURDIR)
# Where the module for KVER is built: the tree itself for 6.1, else a
# copy (build-modules.sh); KSUFFIX names KVER's results (none for 6.1).
ifeq ($(KVER),6.1)
MODTOP		:= $(TOP)
KSUFFIX		:=
VM_KO_ARGS	:=
else
MODTOP		:= $(TOP)/build/$(KVER)/mod
KSUFFIX		:= -$(KVER)
VM_KO_ARGS	:= --env SOFTRC_KO=$(MODTOP)/drivers/infiniband/sw/softrc/softrc.ko \
		   --env SOFTRC_KMOD_DIR=$(TOP)/build/$(KVER)/kmod
endif
# tools/testing/vm/run.sh on KVER's kernel with the modules built for it
VM_RUN		= SOFTRC_KVER=$(KVER) tools/testing/vm/run.sh $(VM_KO_ARGS)
# What `make check` runs on each kernel: on KVER's (6.1 by default) every
# VM suite and interop; on the other (6.12) the named set below and
# interop with that kernel's rxe. CI's 80 minutes hold one full VM set,
# not two; `make check KVER=6.12` runs every suite on 6.12 instead.
ifeq ($(KVER),6.1)
CHECK_KVERS	?= 6.1 6.12
else
CHECK_KVERS	?= $(KVER)
endif
# the data path, ATOMIC WRITE (wr_ex), UD and rdma_cm, UC, perftest, a
# kernel ULP (iSER), FLUSH, QP teardown and verified rdma_cm connections
CHECK_SUITES_6.12 ?= datapath.sh wr_ex.sh ud.sh uc.sh perftest.sh iser.sh flush.sh teardown.sh cm.sh
CHECK_SUITES_6.1 ?=
# targets that know only 6.1 yet say so instead of running on 6.1
ifneq ($(KVER),6.1)
ifneq ($(filter bench-profile,$(MAKECMDGOALS)),)
$(error make $(filter bench-profile,$(MAKECMDGOALS)): only for KVER=6.1 yet)
endif
endif
MODDIR		:= drivers/infiniband/sw/softrc
SRC_FILES	= $(shell git ls-files '$(MODDIR)/*.[ch]' 'include/*.h' 2>/dev/null)
SUMMARY		:= $(TOP)/tools/testing/ktap/ktap-summary
RESULTS		:= $(TOP)/build/results

.PHONY: all modules deps clean check check-host check-vm check-harness \
	style sparse demo fuzz coverage bench-core verbs check-interop bench \
	check-interop-cross \
	check-debug soak bench-profile bench-cm install uninstall dkms-install \
	dkms-uninstall install-links uninstall-links
all: modules

$(KDIR)/Makefile:
	tools/setup/deps.sh

ifeq ($(KVER),6.1)
modules: $(KDIR)/Makefile
	$(MAKE) -C $(KDIR) M=$(TOP) modules
else
modules:
	tools/testing/build-modules.sh $(KDIR) build/$(KVER)
endif

deps:
	tools/setup/deps.sh

# Installing (as root). KREL is the release of the kernel KDIR builds for;
# DESTDIR prefixes every installed path (packaging, tests).
KREL		= $(shell sed -n 's/^\#define UTS_RELEASE "\(.*\)"/\1/p' \
		    $(KDIR)/include/generated/utsrelease.h 2>/dev/null)
VERSION		= $(shell tools/setup/version.sh)
LINKS_FILES	:= usr/sbin/softrc-links lib/systemd/system/softrc-links.service \
		   lib/udev/rules.d/99-softrc-links.rules
install: modules install-links
	$(MAKE) -C $(KDIR) M=$(MODTOP) INSTALL_MOD_DIR=updates \
		$(if $(DESTDIR),INSTALL_MOD_PATH=$(DESTDIR)) modules_install
	$(if $(DESTDIR),,depmod -a $(KREL))

uninstall: uninstall-links
	rm -f $(DESTDIR)/lib/modules/$(KREL)/updates/$(MODDIR)/softrc.ko*
	-rmdir -p $(DESTDIR)/lib/modules/$(KREL)/updates/$(MODDIR) 2>/dev/null
	$(if $(DESTDIR),,depmod -a $(KREL))

# softrc-links and the unit and udev rule that run it (see its header);
# /etc/softrc/links.conf is the administrator's and is never touched
install-links:
	install -D -m 755 tools/softrc-links/softrc-links $(DESTDIR)/usr/sbin/softrc-links
	install -D -m 644 tools/softrc-links/softrc-links.service \
		$(DESTDIR)/lib/systemd/system/softrc-links.service
	install -D -m 644 tools/softrc-links/99-softrc-links.rules \
		$(DESTDIR)/lib/udev/rules.d/99-softrc-links.rules
	-$(if $(DESTDIR),,systemctl daemon-reload >/dev/null 2>&1)

uninstall-links:
	rm -f $(addprefix $(DESTDIR)/,$(LINKS_FILES))
	-$(if $(DESTDIR),,systemctl daemon-reload >/dev/null 2>&1)

# DKMS: the module's sources, VERSION and dkms.conf in /usr/src/softrc-V;
# dkms builds and installs it for the kernel KDIR belongs to (KREL) and
# again for every 6.1 kernel installed later.
DKMS_SRC	= $(DESTDIR)/usr/src/softrc-$(VERSION)
dkms-install: install-links
	tools/setup/deps.sh dkms
	@[ "$(VERSION)" != unknown ] || { echo "dkms-install: no version" >&2; exit 1; }
	rm -rf $(DKMS_SRC) && mkdir -p $(DKMS_SRC)
	cp Kbuild $(DKMS_SRC)/
	tar -cf - $$(find $(MODDIR) include/softrc -name '*.[ch]' -o -name Kbuild \
		-o -name '*.mk' | grep -v softrc_probes.h) \
		tools/setup/version.sh | tar -xf - -C $(DKMS_SRC)
	echo "$(VERSION)" > $(DKMS_SRC)/VERSION
	sed 's/@VERSION@/$(VERSION)/' dkms.conf > $(DKMS_SRC)/dkms.conf
	dkms add -m softrc -v $(VERSION)
	dkms install -m softrc -v $(VERSION) $(if $(KREL),-k $(KREL))

# every softrc version DKMS knows, whatever tree installed it
dkms-uninstall: uninstall-links
	tools/setup/dkms-uninstall.sh

clean:
	-$(MAKE) -C $(KDIR) M=$(TOP) clean
	rm -rf build

# check: W=1 build with warnings as errors, then every suite. Each step
# writes KTAP to build/results/NAME.ktap; a step that exits non-zero adds
# a failing result of its own, so a suite that cannot even start still
# counts. The summary line counts every result. check-vm and
# check-interop run once per kernel of CHECK_KVERS (default KVER: 6.1).
RUN_STEP = { $(2); } 2>&1 | tee $(RESULTS)/$(1).ktap; rc=$${PIPESTATUS[0]}; \
	[ $$rc -eq 0 ] || echo "not ok 1 $(1): step exited with status $$rc" | \
	tee -a $(RESULTS)/$(1).ktap

# KVER_STEP TARGET SERIES [VARS]: make TARGET KVER=SERIES VARS; when it
# cannot run at all (e.g. the modules do not build for that kernel), a
# failing result
KVER_STEP = $(MAKE) --no-print-directory $(1) KVER=$(2) $(3) || \
	echo "not ok 1 $(1) KVER=$(2): make exited with status $$?" | \
	tee $(RESULTS)/$(1)-$(2).ktap

check: deps
	@rm -rf $(RESULTS) && mkdir -p $(RESULTS)
	$(if $(filter 6.1,$(KVER)),$(MAKE) -C $(KDIR) M=$(TOP) W=1 KCFLAGS=-Werror modules)
	@$(call RUN_STEP,host,$(MAKE) -s -C selftests/core all run)
	@$(call RUN_STEP,bench-tools,tools/bench/curves-selftest.sh)
	@$(call RUN_STEP,resraw,$(MAKE) -s -C tools/resraw check)
	@$(call RUN_STEP,docs,tools/testing/rst-check.sh)
	@$(call RUN_STEP,harness,SOFTRC_KVER=$(KVER) tools/testing/harness/vm_harness.sh)
	@$(foreach k,$(CHECK_KVERS),$(call KVER_STEP,check-vm,$(k),$(if \
		$(filter $(k),$(KVER)),,VM_SUITES="$(CHECK_SUITES_$(k))"));)
	@$(foreach k,$(CHECK_KVERS),$(call KVER_STEP,check-interop,$(k));)
	@$(if $(filter 6.1,$(CHECK_KVERS)),$(if $(filter 6.12,$(CHECK_KVERS)),\
		$(MAKE) --no-print-directory check-interop-cross || \
		echo "not ok 1 check-interop-cross: make exited with status $$?" | \
		tee $(RESULTS)/interop-cross.ktap))
	@$(SUMMARY) $(RESULTS)/*.ktap

check-host:
	@mkdir -p $(RESULTS)
	@$(call RUN_STEP,host,$(MAKE) -s -C selftests/core all run)
	@$(call RUN_STEP,bench-tools,tools/bench/curves-selftest.sh)
	@$(call RUN_STEP,resraw,$(MAKE) -s -C tools/resraw check)
	@$(call RUN_STEP,docs,tools/testing/rst-check.sh)

check-harness:
	@mkdir -p $(RESULTS)
	@$(call RUN_STEP,harness$(KSUFFIX),SOFTRC_KVER=$(KVER) tools/testing/harness/vm_harness.sh)

# All VM suites run in one guest boot (on KVER's kernel); the guest's own
# verdict (finished, kernel log clean) becomes two more results.
VM_RES		= $(RESULTS)/vm$(KSUFFIX)
check-vm: modules verbs
	@mkdir -p $(RESULTS)
	@$(VM_RUN) --timeout 3000 $(if $(VM_SUITES),--env SOFTRC_VM_SUITES="$(VM_SUITES)") \
		-- selftests/vm/run_all.sh 2>&1 | \
		tee $(VM_RES).log; echo "$${PIPESTATUS[0]}" > $(VM_RES).status
	@tools/testing/ktap/vm-ktap $(VM_RES).log $(VM_RES).status \
		> $(VM_RES).ktap

# libibverbs test programs the VM suites run (selftests/verbs/*.c, and
# tools/bench/qpmem, which limits.sh runs too; tools/resraw, which
# observe.sh runs)
verbs:
	$(MAKE) -C selftests/verbs
	$(MAKE) -C tools/bench
	$(MAKE) -C tools/resraw

# Interop with Linux rxe: two VMs (softrc and rdma_rxe) on a QEMU socket
# network, both on KVER's kernel; runs on the host, outside run_all.sh.
check-interop: modules verbs
	@mkdir -p $(RESULTS)
	@$(call RUN_STEP,interop$(KSUFFIX),SOFTRC_KVER=$(KVER) selftests/vm/interop.sh)

# softrc on 6.1 (VM A) against softrc on 6.12 (VM B), the same list as
# check-interop (results interop-cross.ktap); needs both builds
check-interop-cross: verbs
	@$(MAKE) --no-print-directory modules KVER=6.1
	@$(MAKE) --no-print-directory modules KVER=6.12
	@mkdir -p $(RESULTS)
	@$(call RUN_STEP,interop-cross,INTEROP_B=softrc SOFTRC_KVER_A=6.1 \
		SOFTRC_KVER_B=6.12 selftests/vm/interop.sh)

# Debug kernel: not part of check (the kernel build alone outlasts CI).
check-debug: deps
	SOFTRC_KVER=$(KVER) tools/testing/check-debug.sh

bench: modules verbs
	SOFTRC_KVER=$(KVER) tools/bench/bench.sh

bench-profile: modules
	tools/bench/profile.sh

bench-cm: modules
	SOFTRC_KVER=$(KVER) tools/bench/bench-cm.sh

# Soak (selftests/vm/soak/run.sh): one VM boot, SOAK_MINUTES of traffic
# (soak.sh) plus a margin for the last QP lives to drain, then
# SOAK_CM_MINUTES of rdma_cm connection cycles (cm_soak.sh) plus a margin
# for the last cycle; 3 GiB for 128 processes with their registered
# buffers. SOAK_CONNS, SOAK_LIFE, SOAK_PHASE, SOAK_SEED, SOAK_TIMEOUT,
# SOAK_CM_CONNS, SOAK_CM_MEMCG_KB pass through (see the scripts' headers).
SOAK_MINUTES	?= 20
SOAK_CM_MINUTES	?= 10
SOAK_KNOBS	:= SOAK_CONNS SOAK_LIFE SOAK_PHASE SOAK_SEED SOAK_TIMEOUT \
		   SOAK_CM_CONNS SOAK_CM_MEMCG_KB
soak: modules verbs
	$(VM_RUN) --timeout $$((($(SOAK_MINUTES) + $(SOAK_CM_MINUTES)) * 60 + 1500)) --mem 3072 \
		--env SOAK_MINUTES=$(SOAK_MINUTES) --env SOAK_CM_MINUTES=$(SOAK_CM_MINUTES) \
		$(foreach v,$(SOAK_KNOBS),$(if $($(v)),--env $(v)=$($(v)))) \
		-- selftests/vm/soak/run.sh

# X-macro tables (one list expanded into enum, names and descriptors)
# are macros checkpatch cannot parse: in those files alone it may not
# demand parentheses around a list or flag a constant argument used twice.
XMACRO_FILES	= $(shell git grep -l 'SOFTRC_XMACRO_TABLE' -- $(MODDIR) include)
# trace headers: TRACE_EVENT()'s layout is the kernel's, not checkpatch's
TRACE_FILES	= $(shell git grep -l '^\#define TRACE_SYSTEM' -- $(MODDIR))
CHECKPATCH	= $$ksrc/scripts/checkpatch.pl --strict --no-tree --terse \
		  --ignore FILE_PATH_CHANGES,SPDX_LICENSE_TAG
style:
	@tools/testing/compat-check.sh
	@tools/testing/engine-check.sh
	@ksrc=$$(tools/setup/kernel-src.sh) && \
	$(CHECKPATCH) -f $(filter-out $(XMACRO_FILES) $(TRACE_FILES),$(SRC_FILES)) && \
	$(CHECKPATCH) --ignore COMPLEX_MACRO,MACRO_ARG_REUSE,TRAILING_SEMICOLON \
		-f $(filter-out $(TRACE_FILES),$(XMACRO_FILES)) && \
	$(CHECKPATCH) --ignore COMPLEX_MACRO,MACRO_ARG_REUSE,TRAILING_SEMICOLON \
		--ignore PARENTHESIS_ALIGNMENT,OPEN_ENDED_LINE -f $(TRACE_FILES)

# another series checks its own copy (make modules): the in-tree module
# stays the 6.1 one a bench or check-vm may be loading
ifeq ($(KVER),6.1)
SPARSE_M	:= $(TOP)
else
SPARSE_M	:= $(MODTOP)
sparse: modules
endif
sparse: $(KDIR)/Makefile
	@mkdir -p build
	$(MAKE) -C $(KDIR) M=$(SPARSE_M) C=2 CF="-D__CHECK_ENDIAN__" W=1 modules 2>&1 | \
		tee build/sparse.log; \
	! grep -E 'warning:|error:' build/sparse.log

demo: deps modules
	$(VM_RUN) --timeout 600 -- tools/demo.sh

fuzz:
	$(MAKE) -C selftests/core fuzz

coverage:
	$(MAKE) -C selftests/core coverage

bench-core:
	$(MAKE) -C selftests/core bench
