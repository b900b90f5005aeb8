# SPDX-License-Identifier: GPL-2.0
#
# Build rules of the host tools that compile parts of the protocol core
# in (tools/inject, tools/resraw). A tool's Makefile sets PROG (its
# program, built from PROG.c) and CORE_PARTS (core/*.c files it links,
# recursively expanded so $(CORE) may be used), then includes this:
#
#   make          build PROG
#   make check    PROG --self-test (KTAP)
TOP	:= $(abspath $(dir $(lastword $(MAKEFILE_LIST)))..)
CORE	:= $(TOP)/drivers/infiniband/sw/softrc/core
CC	?= gcc
CFLAGS	?= -O2 -g
CFLAGS	+= -std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter \
	   -I$(TOP)/include -I$(CORE)
HDRS	:= $(wildcard $(CORE)/*.h $(TOP)/include/softrc/*.h)

.PHONY: all check clean
all: $(PROG)

$(PROG): $(PROG).c $(CORE_PARTS) $(HDRS)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(PROG).c $(CORE_PARTS)

check: $(PROG)
	./$(PROG) --self-test

clean:
	rm -f $(PROG)
