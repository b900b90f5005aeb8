#!/bin/sh
# tools/testing/harness/pair_ping.sh - guest side of the harness's pair test.
#
# Run in both guests of tools/testing/vm/run-pair.sh.  Gives eth0 a link-local
# address (A: 169.254.77.1, B: 169.254.77.2; the link only joins the two
# VMs), pings the peer until it answers, then waits until the peer has
# pinged us too, so neither side powers off under the other.  Exit 0 on
# success, 1 after ~60 s without it.
set -eu

nic=${SOFTRC_VM_NIC:-eth0}
case ${SOFTRC_VM_NAME:-} in
A) me=169.254.77.1 peer=169.254.77.2 ;;
B) me=169.254.77.2 peer=169.254.77.1 ;;
*) echo "pair_ping: SOFTRC_VM_NAME must be A or B"; exit 1 ;;
esac

ip addr add "$me/24" dev "$nic"
ip link set "$nic" up

# Count of ICMP echo requests received (Icmp: InEchos in /proc/net/snmp).
in_echos() {
	awk '/^Icmp:/ { if (!h) { for (i = 1; i <= NF; i++) if ($i == "InEchos") c = i; h = 1 }
		else print $c }' /proc/net/snmp
}

got_reply=0
i=0
while [ "$i" -lt 120 ]; do
	if [ "$got_reply" = 0 ] && busybox ping -c 1 -W 1 "$peer" >/dev/null 2>&1; then
		got_reply=1
		echo "pair_ping: $SOFTRC_VM_NAME got a reply from $peer"
	fi
	if [ "$got_reply" = 1 ] && [ "$(in_echos)" -gt 0 ]; then
		echo "pair_ping: $SOFTRC_VM_NAME was pinged by the peer; ok"
		sleep 1 # let our last echo reply leave the VM
		exit 0
	fi
	[ "$got_reply" = 1 ] && sleep 0.5
	i=$((i + 1))
done
echo "pair_ping: $SOFTRC_VM_NAME failed (reply=$got_reply, echos in=$(in_echos))"
exit 1
