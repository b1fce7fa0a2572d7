#!/bin/sh
# netfab: fabric lab, device spine1, role spine, platform frr (Linux kernel side)
# Generated from the fabric intent: change the intent, not this file.
#
# Run as root inside the switch's network namespace once its ports exist. FRR (spine1.conf) owns
# addresses and BGP; this script sets what FRR cannot express: forwarding, MTU, the kernel ECMP hash,
# DCB (DSCP->priority map, ETS, PFC) and ECN marking. Re-running it replaces what an earlier run installed.
#
# Environment:
#   ECN_MODE=auto|red|nftables|off  auto (default): RED if this kernel has it, else the nftables phantom queue
#   NETFAB_SHAPE_MBIT=N             shape every ECN port to N Mbit/s. A veth has no line rate, so a queue (and
#                                   ECN marking) only appears behind a shaper; unset = no shaper
#   NETFAB_ECN_AVPKT=BYTES          average packet size for the ECN arithmetic (default 1500)
#   NETFAB_PROC_SYS, NETFAB_SYSFS   other roots for /proc/sys and /sys (tests)
set -eu

ECN_MODE="${ECN_MODE:-auto}"
SHAPE_MBIT="${NETFAB_SHAPE_MBIT:-}"
AVPKT="${NETFAB_ECN_AVPKT:-1500}"
PROC_SYS="${NETFAB_PROC_SYS:-/proc/sys}"
SYSFS="${NETFAB_SYSFS:-/sys}"

case "$ECN_MODE" in
	auto | red | nftables | off) ;;
	*) echo "ECN_MODE must be auto, red, nftables or off (got '$ECN_MODE')" >&2; exit 2 ;;
esac
case "$AVPKT" in '' | 0 | *[!0-9]*) echo "NETFAB_ECN_AVPKT must be a byte count" >&2; exit 2 ;; esac
case "$SHAPE_MBIT" in 0 | *[!0-9]*) echo "NETFAB_SHAPE_MBIT must be a whole number of Mbit/s" >&2; exit 2 ;; esac

have() { command -v "$1" >/dev/null 2>&1; }
port_exists() { [ -e "$SYSFS/class/net/$1" ]; }
# sysctl_set NAME VALUE: write through /proc (no procps needed); fails when this kernel lacks the knob.
sysctl_set() {
	_f="$PROC_SYS/$(echo "$1" | tr . /)"
	[ -e "$_f" ] || return 1
	echo "$2" > "$_f"
}
must_sysctl() { sysctl_set "$1" "$2" || { echo "cannot set $1 = $2" >&2; exit 1; }; }

# --- forwarding and MTU ----------------------------------------------------------------------------------
# A switch routes. Strict reverse-path filtering would drop ECMP-asymmetric flows (a reply may come back
# over another uplink), so it is off on every port.
must_sysctl net.ipv4.ip_forward 1
must_sysctl net.ipv6.conf.all.forwarding 1
must_sysctl net.ipv4.conf.all.rp_filter 0
must_sysctl net.ipv4.conf.default.rp_filter 0
MISSING=""
set_port() { # PORT MTU
	if ! port_exists "$1"; then
		MISSING="$MISSING $1"
		return 0
	fi
	ip link set dev "$1" mtu "$2"
	echo 0 > "$PROC_SYS/net/ipv4/conf/$1/rp_filter"
}
set_port swp1 9216
set_port swp2 9216
set_port swp3 9216
set_port swp4 9216
if [ -n "$MISSING" ]; then
	echo "mtu: ports absent, skipped:$MISSING"
else
	echo "mtu: set on 4 ports"
fi

# --- ECMP hash -------------------------------------------------------------------------------------------
# Intent fields: src_ip dst_ip ip_protocol src_port dst_port
# IPv4: policy 1 (built-in, hashes exactly these fields), fields 0x0037
# IPv6: policy 1 (built-in, hashes exactly these fields), fields 0x0037
# fib_multipath_hash_fields (kernel >= 5.12) is what policy 3 reads; it is written in every case so the node
# states its intended field set. Flow label (0x0008) is IPv6-only.
sysctl_set net.ipv4.fib_multipath_hash_fields 0x0037 || true
must_sysctl net.ipv4.fib_multipath_hash_policy 1
sysctl_set net.ipv6.fib_multipath_hash_fields 0x0037 || true
must_sysctl net.ipv6.fib_multipath_hash_policy 1
# Seed: a per-device value, so the tiers do not all make the same choice (polarisation). The knob appeared
# in kernel 6.11 and covers IPv4 and IPv6; 0 would mean "random". Older kernels keep their random seed.
if sysctl_set net.ipv4.fib_multipath_hash_seed 144047992; then
	echo "hash: ipv4 policy 1, ipv6 policy 1, fields 0x0037, seed 144047992"
else
	echo "hash: ipv4 policy 1, ipv6 policy 1, fields 0x0037, seed not set (kernel < 6.11)"
fi

# --- DCB: DSCP -> priority, ETS, PFC --------------------------------------------------------------------
# Set with iproute2 `dcb` where a port has DCB (switchdev ASICs, NICs). A veth has no DCB at all: dcb answers
# "Operation not supported", so PFC CANNOT RUN ON VETH. On the namespace lab the lossless class is rendered
# but not enforced; PFC is verified on hardware only.
# DSCP map (trust dscp): 26:3 48:6; every other DSCP -> default-prio 0.
# ETS: priority = traffic class; TC0 default 50%; TC3 roce 50%; TC6 cnp strict.
# PFC: priorities 3 on lossless ports. `delay` is the round-trip cable delay in bits
#   (2 x length / 2e8 m/s x speed = metres x Gbit/s x 10), from which the driver sizes PFC headroom
#   (headroom: auto); the DCB field is 16 bits, so longer/faster links are capped at 65535 and flagged.
DCB_OK=""
DCB_FAIL=""
dcb_port() { # PORT PFC-ARGS...
	_p=$1
	shift
	port_exists "$_p" || return 0
	if have dcb \
		&& dcb app replace dev "$_p" default-prio 0 dscp-prio 26:3 48:6 2>/dev/null \
		&& dcb ets set dev "$_p" willing off prio-tc 0:0 1:1 2:2 3:3 4:4 5:5 6:6 7:7 tc-tsa 0:ets 1:ets 2:ets 3:ets 4:ets 5:ets 6:strict 7:ets tc-bw 0:50 1:0 2:0 3:50 4:0 5:0 6:0 7:0 2>/dev/null \
		&& dcb pfc set dev "$_p" "$@" 2>/dev/null; then
		DCB_OK="$DCB_OK $_p"
	else
		DCB_FAIL="$DCB_FAIL $_p"
	fi
}
dcb_port swp1 prio-pfc all:off 3:on delay 10000
dcb_port swp2 prio-pfc all:off 3:on delay 10000
dcb_port swp3 prio-pfc all:off 3:on delay 10000
dcb_port swp4 prio-pfc all:off 3:on delay 10000
if [ -z "$DCB_FAIL" ]; then
	echo "pfc: on (priorities 3), DSCP map and ETS set on$DCB_OK"
else
	echo "pfc: unsupported on$DCB_FAIL: PFC cannot run on veth (dcb: Operation not supported); DSCP map, ETS and PFC need DCB hardware"
fi

# --- ECN -------------------------------------------------------------------------------------------------
# Queue 3 (roce, DSCP 26): mark ECT packets CE from Kmin 150000 B, rising to
#   100 % at Kmax 1500000 B, queue-average weight 0 (0 = instantaneous).
# Every port marks: incast builds at the leaf's host-facing port (the last hop), and fabric ports mark too.
# red:      tc RED with `ecn` as the port's root qdisc, or under a tbf shaper when NETFAB_SHAPE_MBIT is set.
#           min/max = Kmin/Kmax bytes, probability = Pmax/100 (the kernel keeps it as a 32-bit fraction, so
#           100 % is written as 0.99999999), limit = 4 x Kmax (tc-red(8): a few times max),
#           bandwidth = port speed (at most 34 Gbit/s, tc's limit). tc derives the EWMA constant Wlog from
#           burst (tc_red_eval_ewma: the smallest Wlog with a = burst + 1 - min/avpkt <= (1-(1-2^-Wlog)^burst)
#           x 2^Wlog, about 2^Wlog), so burst is chosen to put a inside (2^(Wlog-1), 2^Wlog]: ceil(min/avpkt)
#           for Wlog 1, round(min/avpkt) + 2^(Wlog-1) above. Wlog = max(weight, 1): 1 is the nearest Linux has
#           to weight 0 (it holds while Kmin spans well over 2^Wlog packets of avpkt).
#           Software RED keeps one FIFO per port: it marks every ECT packet there, not only the queue's DSCPs.
# nftables: a "phantom queue" for kernels without RED. A named limit per port and queue (found through an
#           oifname map: one lookup per packet, not a walk over every port's rule) drains at 95 % of the
#           port (or shaper) rate, in packets/s = rate / 8 / avpkt; once more than ceil(Kmin/avpkt) packets
#           are over that rate, ECT packets of the queue's DSCPs are CE-marked. nftables limits count packets
#           (byte-rate limits did not mark in the lab), so Kmax and Pmax cannot be expressed: marking is a
#           step at Kmin with probability 1. The tbf shaper (when set) holds the real queue, limit 4 x Kmax.
ECN_PORTS="swp1:100000:9216 swp2:100000:9216 swp3:100000:9216 swp4:100000:9216"
ECN_ERR=""
pkts() { echo $((($1 + AVPKT - 1) / AVPKT)); }
pps() { echo $((${SHAPE_MBIT:-$1} * 1000000 * 95 / 100 / 8 / AVPKT)); }
# tc_root PORT QDISC ARGS...: install a root qdisc, replacing one of another kind.
tc_root() {
	_p=$1
	shift
	tc qdisc replace dev "$_p" root handle 1: "$@" 2>/dev/null && return 0
	tc qdisc del dev "$_p" root 2>/dev/null || true
	ECN_ERR=$(tc qdisc add dev "$_p" root handle 1: "$@" 2>&1) || return 1
}
tc_clear() {
	for _spec in $ECN_PORTS; do
		_p=${_spec%%:*}
		if port_exists "$_p"; then tc qdisc del dev "$_p" root 2>/dev/null || true; fi
	done
}
nft_clear() {
	if have nft; then nft delete table inet netfab_ecn 2>/dev/null || true; fi
}
shape() { # PORT MTU: the tbf shaper that holds the real queue when NETFAB_SHAPE_MBIT is set
	tc_root "$1" tbf rate "${SHAPE_MBIT}mbit" burst $(($2 * 2)) limit 6000000
}
# tc reads RED's bandwidth (used only to decay the average over idle time) as 32-bit bytes/s: cap at 34 Gbit/s.
red_bw() { if [ "$1" -gt 34000 ]; then echo 34000; else echo "$1"; fi; }
ecn_red() {
	have tc || { ECN_ERR="tc not installed"; return 1; }
	_burst=$(pkts 150000)
	for _spec in $ECN_PORTS; do
		_p=${_spec%%:*}
		_rest=${_spec#*:}
		_speed=${_rest%%:*}
		_mtu=${_rest#*:}
		port_exists "$_p" || continue
		set -- red limit 6000000 min 150000 max 1500000 avpkt "$AVPKT" burst "$_burst" \
			probability 0.99999999 bandwidth "$(red_bw "${SHAPE_MBIT:-$_speed}")mbit" ecn
		if [ -n "$SHAPE_MBIT" ]; then
			shape "$_p" "$_mtu" || return 1
			ECN_ERR=$(tc qdisc replace dev "$_p" parent 1:1 handle 10: "$@" 2>&1) || return 1
		else
			tc_root "$_p" "$@" || return 1
		fi
		echo "  $_p: red min 150000 max 1500000 burst $_burst avpkt $AVPKT${SHAPE_MBIT:+ under tbf ${SHAPE_MBIT}mbit}"
	done
}
ecn_nft() {
	have nft || { ECN_ERR="nft not installed"; return 1; }
	for _spec in $ECN_PORTS; do
		_p=${_spec%%:*}
		_mtu=${_spec##*:}
		port_exists "$_p" || continue
		if [ -n "$SHAPE_MBIT" ]; then shape "$_p" "$_mtu" || return 1; else tc qdisc del dev "$_p" root 2>/dev/null || true; fi
	done
	# One transaction: create-if-missing, delete, re-create, so a re-run replaces the table atomically.
	ECN_ERR=$(nft -f - 2>&1 <<NFT
table inet netfab_ecn
delete table inet netfab_ecn
table inet netfab_ecn {
	counter marked_swp1 { }
	limit pq3_swp1 { rate over $(pps 100000)/second burst $(pkts 150000) packets }
	counter marked_swp2 { }
	limit pq3_swp2 { rate over $(pps 100000)/second burst $(pkts 150000) packets }
	counter marked_swp3 { }
	limit pq3_swp3 { rate over $(pps 100000)/second burst $(pkts 150000) packets }
	counter marked_swp4 { }
	limit pq3_swp4 { rate over $(pps 100000)/second burst $(pkts 150000) packets }
	map marked { type ifname : counter; elements = { "swp1" : "marked_swp1", "swp2" : "marked_swp2", "swp3" : "marked_swp3", "swp4" : "marked_swp4" } }
	map pq3 { type ifname : limit; elements = { "swp1" : "pq3_swp1", "swp2" : "pq3_swp2", "swp3" : "pq3_swp3", "swp4" : "pq3_swp4" } }
	chain postrouting {
		type filter hook postrouting priority 0; policy accept;
		ip dscp { 26 } ip ecn { ect0, ect1 } limit name oifname map @pq3 ip ecn set ce counter name oifname map @marked
		ip6 dscp { 26 } ip6 ecn { ect0, ect1 } limit name oifname map @pq3 ip6 ecn set ce counter name oifname map @marked
	}
}
NFT
	) || return 1
	for _spec in $ECN_PORTS; do
		_p=${_spec%%:*}
		_speed=${_spec#*:}
		_speed=${_speed%%:*}
		port_exists "$_p" || continue
		echo "  $_p: nftables phantom queue $(pps "$_speed") pkt/s, q3 burst $(pkts 150000) pkts${SHAPE_MBIT:+, tbf ${SHAPE_MBIT}mbit}"
	done
}
if [ "$ECN_MODE" = auto ]; then
	if ecn_red; then
		ECN_MODE=red
	else
		echo "note: RED unavailable ($ECN_ERR); using the nftables phantom queue"
		tc_clear
		ECN_MODE=nftables
	fi
elif [ "$ECN_MODE" = red ]; then
	ecn_red || { echo "ecn: red failed: $ECN_ERR" >&2; exit 1; }
fi
case "$ECN_MODE" in
	red)
		nft_clear
		echo "ecn: red"
		;;
	nftables)
		if ecn_nft; then
			echo "ecn: nftables"
		else
			echo "note: nftables marking failed: $ECN_ERR" >&2
			tc_clear
			nft_clear
			echo "ecn: off"
		fi
		;;
	off)
		tc_clear
		nft_clear
		echo "ecn: off"
		;;
esac
