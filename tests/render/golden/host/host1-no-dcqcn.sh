#!/bin/sh
# netfab: fabric lab, server host1: GPU NIC addresses, routes, lossless QoS and DCQCN (ConnectX / mlx5)
# Generated from the fabric intent: change the intent, not this file.
#
# Run as root on the server. Settings made with mlnx_qos and sysfs are runtime only: run this at every boot
# (systemd unit or udev hook). Steps whose tool or sysfs path is absent are skipped with a message.
# NETFAB_LAB=1: addresses, routes and MTU only - the namespace lab's hosts have veths, not ConnectX NICs.
# NETFAB_SYSFS: another root for /sys and /proc/sys (tests).
set -eu

LAB="${NETFAB_LAB:-0}"
SYSFS="${NETFAB_SYSFS:-/sys}"
PROC_SYS="${NETFAB_PROC_SYS:-/proc/sys}"

have() { command -v "$1" >/dev/null 2>&1; }
nic_exists() { [ -e "$SYSFS/class/net/$1" ]; }
# put FILE VALUE: write a sysfs/procfs value if the file exists (return 1 when it does not).
put() {
	[ -e "$1" ] || return 1
	echo "$2" > "$1"
}

# --- addresses and routes --------------------------------------------------------------------------------
# MTU 4200: room for the 4096-byte RoCE path MTU plus RoCEv2 headers, below the fabric's link MTU.
# Each NIC gets routing table 100+N with its rail's block via its own leaf, and `ip rule from <its address>`,
# so traffic sourced from a NIC stays on that NIC's rail. The main table routes each rail block (several NICs
# on one block, as in a 3-tier pod, share it as ECMP). Reverse-path filtering is loose: on a multi-rail host
# a reply can arrive on another NIC than the route back.
put "$PROC_SYS/net/ipv4/conf/all/rp_filter" 2 || true
CONFIGURED=""
nic_addr() { # NETDEV MTU ADDRESS/31 GATEWAY TABLE
	if ! nic_exists "$1"; then
		echo "host1: $1 absent, skipped"
		return 1
	fi
	ip link set dev "$1" mtu "$2"
	ip addr replace "$3" dev "$1"
	ip link set dev "$1" up
	put "$PROC_SYS/net/ipv4/conf/$1/rp_filter" 2 || true
	# Table $5: the gateway on-link, then the rail block via it; the rule is re-created, never duplicated.
	ip route replace "$4" dev "$1" scope link src "${3%/*}" table "$5"
	while ip rule del from "${3%/*}" table "$5" 2>/dev/null; do :; done
	ip rule add from "${3%/*}" table "$5" priority "$5"
	CONFIGURED="$CONFIGURED $1"
}
# eth0 (mlx5_0, rail 1) -> leaf1 swp1
if nic_addr eth0 4200 10.64.0.1/31 10.64.0.0 100; then
	ip route replace 10.64.0.0/13 via 10.64.0.0 dev eth0 src 10.64.0.1 table 100
fi
# eth1 (mlx5_1, rail 2) -> leaf2 swp1
if nic_addr eth1 4200 10.72.0.1/31 10.72.0.0 101; then
	ip route replace 10.72.0.0/13 via 10.72.0.0 dev eth1 src 10.72.0.1 table 101
fi
if nic_exists eth0; then ip route replace 10.64.0.0/13 via 10.64.0.0 dev eth0; fi
if nic_exists eth1; then ip route replace 10.72.0.0/13 via 10.72.0.0 dev eth1; fi
echo "host1: addresses and routes set on${CONFIGURED:- no NIC}"

if [ "$LAB" = 1 ]; then
	echo "host1: NETFAB_LAB=1: addresses, routes and MTU only (no mlnx_qos, no DCQCN)"
	exit 0
fi

# --- lossless QoS (mlnx_qos) -----------------------------------------------------------------------------
# trust dscp; PFC vector 0,0,0,1,0,0,0,0 (priorities 0..7); priority N -> TC N (mlx5's default
# swaps priorities 0 and 1); ETS per TC ets,ets,ets,ets,ets,ets,strict,ets, shares 50,0,0,50,0,0,0,0 (sum 100 over ETS TCs).
# DSCP -> priority: mlx5 defaults to DSCP >> 3; only the 54 DSCPs the intent maps elsewhere are set.
# RoCE traffic class for rdma_cm: ToS 106 = DSCP 26 << 2 | ECT(0), so switches can ECN-mark it.
qos_nic() { # NETDEV RDMA-DEVICE
	if ! nic_exists "$1"; then
		return 0
	fi
	if have mlnx_qos; then
		mlnx_qos -i "$1" --trust dscp >/dev/null
		mlnx_qos -i "$1" --dscp2prio set,8,0 --dscp2prio set,9,0 --dscp2prio set,10,0 --dscp2prio set,11,0 --dscp2prio set,12,0 --dscp2prio set,13,0 --dscp2prio set,14,0 --dscp2prio set,15,0 --dscp2prio set,16,0 --dscp2prio set,17,0 --dscp2prio set,18,0 --dscp2prio set,19,0 --dscp2prio set,20,0 --dscp2prio set,21,0 --dscp2prio set,22,0 --dscp2prio set,23,0 --dscp2prio set,24,0 --dscp2prio set,25,0 --dscp2prio set,27,0 --dscp2prio set,28,0 --dscp2prio set,29,0 --dscp2prio set,30,0 --dscp2prio set,31,0 --dscp2prio set,32,0 --dscp2prio set,33,0 --dscp2prio set,34,0 --dscp2prio set,35,0 --dscp2prio set,36,0 --dscp2prio set,37,0 --dscp2prio set,38,0 --dscp2prio set,39,0 --dscp2prio set,40,0 --dscp2prio set,41,0 --dscp2prio set,42,0 --dscp2prio set,43,0 --dscp2prio set,44,0 --dscp2prio set,45,0 --dscp2prio set,46,0 --dscp2prio set,47,0 --dscp2prio set,49,0 --dscp2prio set,50,0 --dscp2prio set,51,0 --dscp2prio set,52,0 --dscp2prio set,53,0 --dscp2prio set,54,0 --dscp2prio set,55,0 --dscp2prio set,56,0 --dscp2prio set,57,0 --dscp2prio set,58,0 --dscp2prio set,59,0 --dscp2prio set,60,0 --dscp2prio set,61,0 --dscp2prio set,62,0 --dscp2prio set,63,0 >/dev/null
		mlnx_qos -i "$1" --pfc 0,0,0,1,0,0,0,0 >/dev/null
		mlnx_qos -i "$1" -p 0,1,2,3,4,5,6,7 -s ets,ets,ets,ets,ets,ets,strict,ets -t 50,0,0,50,0,0,0,0 >/dev/null
		echo "host1: $1 mlnx_qos trust dscp, pfc 0,0,0,1,0,0,0,0, ets 50,0,0,50,0,0,0,0"
	else
		echo "host1: $1 QoS skipped: mlnx_qos not installed (MLNX_OFED or mlnx-tools)"
	fi
	if have cma_roce_tos; then
		cma_roce_tos -d "$2" -t 106 >/dev/null
	else
		echo "host1: $2 RoCE ToS skipped: cma_roce_tos not installed"
	fi
	# Verbs applications that bypass rdma_cm read the OFED per-port traffic class instead.
	put "$SYSFS/class/infiniband/$2/tc/1/traffic_class" 106 || true
}
qos_nic eth0 mlx5_0
qos_nic eth1 mlx5_1

# --- DCQCN -----------------------------------------------------------------------------------------------
# DCQCN disabled by the intent: RoCE stays lossless through PFC, and congestion is left to the collective
# library's own control (e.g. NCCL), as large training clusters have run. Both the reaction point (rate cuts
# on CNPs) and the notification point (CNP generation) are switched off on every priority, so CE marks from
# the switches no longer slow QPs down.
cc_set() { # DIR PARAM VALUE
	put "$1/$2" "$3" || put "$1/params/$2" "$3" || echo "host1: ${1##*/}/$2 not exposed by this driver, skipped"
}
dcqcn_nic() { # NETDEV
	_ecn="$SYSFS/class/net/$1/ecn"
	if [ ! -d "$_ecn/roce_rp" ] || [ ! -d "$_ecn/roce_np" ]; then
		if nic_exists "$1"; then
			echo "host1: $1 DCQCN skipped: no $_ecn/roce_rp (MLNX_OFED sysfs); upstream mlx5 uses debugfs cc_params"
		fi
		return 0
	fi
	put "$_ecn/roce_rp/enable/0" 0
	put "$_ecn/roce_np/enable/0" 0
	put "$_ecn/roce_rp/enable/1" 0
	put "$_ecn/roce_np/enable/1" 0
	put "$_ecn/roce_rp/enable/2" 0
	put "$_ecn/roce_np/enable/2" 0
	put "$_ecn/roce_rp/enable/3" 0
	put "$_ecn/roce_np/enable/3" 0
	put "$_ecn/roce_rp/enable/4" 0
	put "$_ecn/roce_np/enable/4" 0
	put "$_ecn/roce_rp/enable/5" 0
	put "$_ecn/roce_np/enable/5" 0
	put "$_ecn/roce_rp/enable/6" 0
	put "$_ecn/roce_np/enable/6" 0
	put "$_ecn/roce_rp/enable/7" 0
	put "$_ecn/roce_np/enable/7" 0
	echo "host1: $1 DCQCN off (PFC + collective-library congestion control)"
}
dcqcn_nic eth0
dcqcn_nic eth1
