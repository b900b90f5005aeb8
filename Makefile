# SPDX-License-Identifier: GPL-2.0
#
# softrc: build the module, run the tests, show the demo.
#
#   make              build drivers/infiniband/sw/softrc/softrc.ko
#   make check        every test suite (host and VM); one summary line
#   make demo         boot the VM, create devices, show them
#   make style        checkpatch --strict on our sources
#   make sparse       sparse (C=2) with endian checks
#   make fuzz | coverage | bench-core   protocol core on the host
#
# KDIR selects the kernel build tree: the running kernel's if it has
# one, else Debian 12's 6.1.0-57-amd64 headers (installed if missing).
SHELL		:= /bin/bash
KVER_DEBIAN	:= 6.1.0-57-amd64
KDIR		?= $(firstword $(wildcard /lib/modules/$(shell uname -r)/build) \
			/usr/src/linux-headers-$(KVER_DEBIAN))
TOP		:= $(CURDIR)
MODDIR		:= drivers/infiniband/sw/softrc
SRC_FILES	= $(shell git ls-files '$(MODDIR)/*.[ch]' 'include/*.h' 2>/dev/null)
SUMMARY		:= $(TOP)/tools/testing/ktap-summary
RESULTS		:= $(TOP)/build/results

.PHONY: all modules deps clean check check-host check-vm check-harness \
	style sparse demo fuzz coverage bench-core
all: modules

$(KDIR)/Makefile:
	tools/setup/deps.sh

modules: $(KDIR)/Makefile
	$(MAKE) -C $(KDIR) M=$(TOP) modules

deps:
	tools/setup/deps.sh

clean:
	-$(MAKE) -C $(KDIR) M=$(TOP) clean
	rm -rf build

# check: W=1 build with warnings as errors, then every suite. Each suite
# writes KTAP to build/results/; the summary counts every result line.
check: deps
	@mkdir -p build
	@rm -rf $(RESULTS) && mkdir -p $(RESULTS)
	$(MAKE) -C $(KDIR) M=$(TOP) W=1 KCFLAGS=-Werror modules
	-$(MAKE) --no-print-directory check-host
	-$(MAKE) --no-print-directory check-harness
	-$(MAKE) --no-print-directory check-vm
	@$(SUMMARY) $(RESULTS)/*.ktap

check-host:
	@mkdir -p $(RESULTS)
	$(MAKE) -C selftests/core all
	$(MAKE) -s -C selftests/core run 2>&1 | tee $(RESULTS)/host.ktap

check-harness:
	@mkdir -p $(RESULTS)
	selftests/harness/vm_harness.sh 2>&1 | tee $(RESULTS)/harness.ktap

check-vm: modules
	@mkdir -p $(RESULTS)
	tools/vm/run.sh --timeout 900 -- selftests/vm/run_all.sh 2>&1 | \
		tee $(RESULTS)/vm.log; \
	echo "$${PIPESTATUS[0]}" > $(RESULTS)/vm.status
	@tools/testing/vm-ktap $(RESULTS)/vm.log $(RESULTS)/vm.status \
		> $(RESULTS)/vm.ktap

# X-macro tables (one list expanded into enum, names and descriptors)
# are macros checkpatch cannot parse: in those files alone it may not
# demand parentheses around a list or flag a constant argument used twice.
XMACRO_FILES	= $(shell git grep -l 'SOFTRC_XMACRO_TABLE' -- $(MODDIR) include)
CHECKPATCH	= $$ksrc/scripts/checkpatch.pl --strict --no-tree --terse \
		  --ignore FILE_PATH_CHANGES,SPDX_LICENSE_TAG
style:
	@ksrc=$$(tools/setup/kernel-src.sh) && \
	$(CHECKPATCH) -f $(filter-out $(XMACRO_FILES),$(SRC_FILES)) && \
	$(CHECKPATCH) --ignore COMPLEX_MACRO,MACRO_ARG_REUSE,TRAILING_SEMICOLON -f $(XMACRO_FILES)

sparse: $(KDIR)/Makefile
	$(MAKE) -C $(KDIR) M=$(TOP) C=2 CF="-D__CHECK_ENDIAN__" W=1 modules 2>&1 | \
		tee build/sparse.log; \
	! grep -E 'warning:|error:' build/sparse.log

demo: deps modules
	tools/vm/run.sh --timeout 600 -- tools/demo.sh

fuzz:
	$(MAKE) -C selftests/core fuzz

coverage:
	$(MAKE) -C selftests/core coverage

bench-core:
	$(MAKE) -C selftests/core bench
