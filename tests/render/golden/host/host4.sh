#!/bin/sh
# netfab: fabric lab, network backend, server host4: NIC addresses, routes, lossless QoS and DCQCN (ConnectX / mlx5)
# Generated from the cluster intent (server profile generic): change the intent, not this file.
#
# Run as root on the server. Settings made with mlnx_qos/dcb, sysfs, debugfs and configfs are runtime only: run
# this at every boot (systemd unit or udev hook). It changes nothing and exits 1 when a NIC the profile names
# is missing; it exits 1 at the end when a setting could not be applied (each one is named on stderr).
# Every other network of this server has its own script: they use distinct NICs and routing tables 100+N
# (N: the port's place in the server profile), and the same values for the host-wide sysctls.
# NETFAB_LAB=1: addresses, routes and MTU only - the namespace lab's hosts have veths, not ConnectX NICs.
# NETFAB_SYSFS, NETFAB_PROC_SYS, NETFAB_DEBUGFS, NETFAB_CONFIGFS: other roots for /sys, /proc/sys,
# /sys/kernel/debug and /sys/kernel/config (tests).
set -eu

LAB="${NETFAB_LAB:-0}"
SYSFS="${NETFAB_SYSFS:-/sys}"
PROC_SYS="${NETFAB_PROC_SYS:-/proc/sys}"
DEBUGFS="${NETFAB_DEBUGFS:-/sys/kernel/debug}"
CONFIGFS="${NETFAB_CONFIGFS:-/sys/kernel/config}"
FAILED=0

have() { command -v "$1" >/dev/null 2>&1; }
nic_exists() { [ -e "$SYSFS/class/net/$1" ]; }
rdma_exists() { [ -e "$SYSFS/class/infiniband/$1" ]; }
# put FILE VALUE: write a sysfs/procfs value if the file exists (return 1 when it does not or the write fails).
put() {
	[ -e "$1" ] || return 1
	echo "$2" 2>/dev/null > "$1"
}
# fail WHAT: a setting that did not take; the run goes on with the others and exits 1 at the end.
fail() {
	echo "host4: $*" >&2
	FAILED=$((FAILED + 1))
}

# --- the NICs this network uses (server profile generic) ----------------------------------------------
MISSING=""
for dev in eth0 eth1; do
	nic_exists "$dev" || MISSING="$MISSING $dev"
done
if [ "$LAB" != 1 ]; then
	for dev in mlx5_0 mlx5_1; do
		rdma_exists "$dev" || MISSING="$MISSING $dev"
	done
fi
if [ -n "$MISSING" ]; then
	echo "host4: missing NIC(s):$MISSING; nothing was changed. Check the names with 'ip link' and 'rdma link', then fix servers.profile or servers.overrides in the intent" >&2
	exit 1
fi

# --- addresses and routes --------------------------------------------------------------------------------
# MTU 4200: this network's host MTU (room for the 4096-byte RoCE path MTU plus RoCEv2 headers).
# Each NIC gets its own routing table 100+N with its block via its own leaf, and `ip rule from <its address>`,
# so traffic sourced from a NIC stays on that NIC's rail. The main table routes each block (several NICs on
# one block, as in a 3-tier pod, share it as ECMP). Reverse-path filtering is loose: on a multi-rail host a
# reply can arrive on another NIC than the route back.
put "$PROC_SYS/net/ipv4/conf/all/rp_filter" 2 || true
nic_addr() { # NETDEV MTU ADDRESS/31 GATEWAY TABLE
	ip link set dev "$1" mtu "$2"
	ip addr replace "$3" dev "$1"
	ip link set dev "$1" up
	put "$PROC_SYS/net/ipv4/conf/$1/rp_filter" 2 || true
	# Table $5: the gateway on-link, then the block via it; the rule is re-created, never duplicated.
	ip route replace "$4" dev "$1" scope link src "${3%/*}" table "$5"
	while ip rule del from "${3%/*}" table "$5" 2>/dev/null; do :; done
	ip rule add from "${3%/*}" table "$5" priority "$5"
}
# eth0 (mlx5_0, rail 1) -> leaf3 swp2
nic_addr eth0 4200 10.64.0.7/31 10.64.0.6 100
ip route replace 10.64.0.0/13 via 10.64.0.6 dev eth0 src 10.64.0.7 table 100
# eth1 (mlx5_1, rail 2) -> leaf4 swp2
nic_addr eth1 4200 10.72.0.7/31 10.72.0.6 101
ip route replace 10.72.0.0/13 via 10.72.0.6 dev eth1 src 10.72.0.7 table 101
ip route replace 10.64.0.0/13 via 10.64.0.6 dev eth0
ip route replace 10.72.0.0/13 via 10.72.0.6 dev eth1
echo "host4: addresses and routes set on eth0 eth1"

if [ "$LAB" = 1 ]; then
	echo "host4: NETFAB_LAB=1: addresses, routes and MTU only (no QoS, no DCQCN)"
	exit 0
fi

# --- lossless QoS (mlnx_qos, else dcb) -------------------------------------------------------------------
# trust dscp; PFC vector 0,0,0,1,0,0,0,0 (priorities 0..7); priority N -> TC N (mlx5's default
# swaps priorities 0 and 1); ETS per TC ets,ets,ets,ets,ets,ets,strict,ets, shares 50,0,0,50,0,0,0,0 (sum 100 over ETS TCs).
# DSCP -> priority: mlx5 defaults to DSCP >> 3; mlnx_qos sets only the 54 DSCPs the intent maps elsewhere,
# dcb writes the whole map (an app-table DSCP entry is also what puts the inbox driver in DSCP trust).
# RoCE traffic class: ToS 106 = DSCP 26 << 2 | ECT(0), so switches can ECN-mark it. rdma_cm takes it from
# configfs (default_roce_tos, upstream and OFED alike) or cma_roce_tos; verbs applications such as NCCL take
# it from NCCL_IB_TC (the NCCL environment file netfab writes next to this script).
# RoCE mode (HOST-3): rdma_cm applications that pick no GID type get the device's default_roce_mode, which is
# "IB/RoCE v1" on some kernels and drivers; v1 is not routable, so an L3 fabric drops it. Pinned per RDMA device
# in configfs (kernel Documentation/ABI/testing/configfs-rdma_cm: "IB/RoCE v1" or "RoCE v2", since 4.4) or
# with mlnx-tools' cma_roce_mode -d DEV -p 1 -m 2 (which writes the same file), then read back. Verbs
# applications choose their GID themselves: NCCL takes RoCE v2 from NCCL_IB_ROCE_VERSION_NUM (nccl.conf).
roce_mode() { # RDMA-DEVICE
	_mode=""
	if [ -d "$CONFIGFS/rdma_cm" ]; then
		mkdir -p "$CONFIGFS/rdma_cm/$1" 2>/dev/null || true
		put "$CONFIGFS/rdma_cm/$1/ports/1/default_roce_mode" "RoCE v2" || true
		_mode=$(cat "$CONFIGFS/rdma_cm/$1/ports/1/default_roce_mode" 2>/dev/null || true)
	elif have cma_roce_mode; then
		cma_roce_mode -d "$1" -p 1 -m 2 >/dev/null 2>&1 || true
		_mode=$(cma_roce_mode -d "$1" -p 1 2>/dev/null || true)
	fi
	if [ "$_mode" = "RoCE v2" ]; then
		echo "host4: $1 rdma_cm default RoCE mode: RoCE v2"
	else
		fail "$1: RoCE v2 NOT pinned for rdma_cm (default_roce_mode reads '${_mode:-nothing}'): modprobe rdma_cm and mount configfs on /sys/kernel/config, or install mlnx-tools (cma_roce_mode)"
	fi
}
qos_nic() { # NETDEV RDMA-DEVICE
	if have mlnx_qos; then
		mlnx_qos -i "$1" --trust dscp >/dev/null || fail "$1: mlnx_qos --trust failed"
		mlnx_qos -i "$1" --dscp2prio set,8,0 --dscp2prio set,9,0 --dscp2prio set,10,0 --dscp2prio set,11,0 --dscp2prio set,12,0 --dscp2prio set,13,0 --dscp2prio set,14,0 --dscp2prio set,15,0 --dscp2prio set,16,0 --dscp2prio set,17,0 --dscp2prio set,18,0 --dscp2prio set,19,0 --dscp2prio set,20,0 --dscp2prio set,21,0 --dscp2prio set,22,0 --dscp2prio set,23,0 --dscp2prio set,24,0 --dscp2prio set,25,0 --dscp2prio set,27,0 --dscp2prio set,28,0 --dscp2prio set,29,0 --dscp2prio set,30,0 --dscp2prio set,31,0 --dscp2prio set,32,0 --dscp2prio set,33,0 --dscp2prio set,34,0 --dscp2prio set,35,0 --dscp2prio set,36,0 --dscp2prio set,37,0 --dscp2prio set,38,0 --dscp2prio set,39,0 --dscp2prio set,40,0 --dscp2prio set,41,0 --dscp2prio set,42,0 --dscp2prio set,43,0 --dscp2prio set,44,0 --dscp2prio set,45,0 --dscp2prio set,46,0 --dscp2prio set,47,0 --dscp2prio set,49,0 --dscp2prio set,50,0 --dscp2prio set,51,0 --dscp2prio set,52,0 --dscp2prio set,53,0 --dscp2prio set,54,0 --dscp2prio set,55,0 --dscp2prio set,56,0 --dscp2prio set,57,0 --dscp2prio set,58,0 --dscp2prio set,59,0 --dscp2prio set,60,0 --dscp2prio set,61,0 --dscp2prio set,62,0 --dscp2prio set,63,0 >/dev/null || fail "$1: mlnx_qos --dscp2prio failed"
		mlnx_qos -i "$1" --pfc 0,0,0,1,0,0,0,0 >/dev/null || fail "$1: mlnx_qos --pfc failed"
		mlnx_qos -i "$1" -p 0,1,2,3,4,5,6,7 -s ets,ets,ets,ets,ets,ets,strict,ets -t 50,0,0,50,0,0,0,0 >/dev/null || fail "$1: mlnx_qos ETS failed"
		echo "host4: $1 mlnx_qos trust dscp, pfc 0,0,0,1,0,0,0,0, ets 50,0,0,50,0,0,0,0"
	elif have dcb; then
		dcb app replace dev "$1" dscp-prio 0:0 1:0 2:0 3:0 4:0 5:0 6:0 7:0 8:0 9:0 10:0 11:0 12:0 13:0 14:0 15:0 16:0 17:0 18:0 19:0 20:0 21:0 22:0 23:0 24:0 25:0 26:3 27:0 28:0 29:0 30:0 31:0 32:0 33:0 34:0 35:0 36:0 37:0 38:0 39:0 40:0 41:0 42:0 43:0 44:0 45:0 46:0 47:0 48:6 49:0 50:0 51:0 52:0 53:0 54:0 55:0 56:0 57:0 58:0 59:0 60:0 61:0 62:0 63:0 || fail "$1: dcb app dscp-prio failed"
		dcb pfc set dev "$1" prio-pfc all:off 3:on || fail "$1: dcb pfc failed"
		dcb ets set dev "$1" prio-tc 0:0 1:1 2:2 3:3 4:4 5:5 6:6 7:7 tc-tsa 0:ets 1:ets 2:ets 3:ets 4:ets 5:ets 6:strict 7:ets tc-bw 0:50 1:0 2:0 3:50 4:0 5:0 6:0 7:0 || fail "$1: dcb ets failed"
		echo "host4: $1 dcb trust dscp, pfc 0,0,0,1,0,0,0,0, ets 50,0,0,50,0,0,0,0"
	else
		fail "$1: lossless QoS NOT applied: neither mlnx_qos (MLNX_OFED/mlnx-tools) nor dcb (iproute2) is installed"
	fi
	_tos_set=0
	if [ -d "$CONFIGFS/rdma_cm" ]; then
		mkdir -p "$CONFIGFS/rdma_cm/$2" 2>/dev/null || true
		put "$CONFIGFS/rdma_cm/$2/ports/1/default_roce_tos" 106 && _tos_set=1
	fi
	if [ "$_tos_set" = 0 ] && have cma_roce_tos; then
		cma_roce_tos -d "$2" -t 106 >/dev/null && _tos_set=1
	fi
	[ "$_tos_set" = 1 ] || fail "$2: RoCE ToS 106 NOT set: no rdma_cm configfs (modprobe rdma_cm; mount configfs) and no cma_roce_tos"
	roce_mode "$2"
	# OFED's per-port traffic class, read by verbs applications that set none themselves (absent upstream).
	put "$SYSFS/class/infiniband/$2/tc/1/traffic_class" 106 || true
}
qos_nic eth0 mlx5_0
qos_nic eth1 mlx5_1

# --- DCQCN and CNP -----------------------------------------------------------------------------------------
# DCQCN on priorities 3: the NIC reacts to CNPs (RP) and answers CE-marked packets with CNPs
# (NP, DSCP 48, priority 6); every other priority is off.
cc_set() { # DIR PARAM VALUE
	put "$1/$2" "$3" || put "$1/params/$2" "$3" || fail "$1/$2: not written (absent or refused)"
}
dcqcn_ofed() { # NETDEV
	_ecn="$SYSFS/class/net/$1/ecn"
	put "$_ecn/roce_rp/enable/0" 0 || fail "$1: roce_rp/enable/0 not written"
	put "$_ecn/roce_np/enable/0" 0 || fail "$1: roce_np/enable/0 not written"
	put "$_ecn/roce_rp/enable/1" 0 || fail "$1: roce_rp/enable/1 not written"
	put "$_ecn/roce_np/enable/1" 0 || fail "$1: roce_np/enable/1 not written"
	put "$_ecn/roce_rp/enable/2" 0 || fail "$1: roce_rp/enable/2 not written"
	put "$_ecn/roce_np/enable/2" 0 || fail "$1: roce_np/enable/2 not written"
	put "$_ecn/roce_rp/enable/3" 1 || fail "$1: roce_rp/enable/3 not written"
	put "$_ecn/roce_np/enable/3" 1 || fail "$1: roce_np/enable/3 not written"
	put "$_ecn/roce_rp/enable/4" 0 || fail "$1: roce_rp/enable/4 not written"
	put "$_ecn/roce_np/enable/4" 0 || fail "$1: roce_np/enable/4 not written"
	put "$_ecn/roce_rp/enable/5" 0 || fail "$1: roce_rp/enable/5 not written"
	put "$_ecn/roce_np/enable/5" 0 || fail "$1: roce_np/enable/5 not written"
	put "$_ecn/roce_rp/enable/6" 0 || fail "$1: roce_rp/enable/6 not written"
	put "$_ecn/roce_np/enable/6" 0 || fail "$1: roce_np/enable/6 not written"
	put "$_ecn/roce_rp/enable/7" 0 || fail "$1: roce_rp/enable/7 not written"
	put "$_ecn/roce_np/enable/7" 0 || fail "$1: roce_np/enable/7 not written"
	cc_set "$_ecn/roce_rp" clamp_tgt_rate 0
	cc_set "$_ecn/roce_rp" clamp_tgt_rate_after_time_inc 1
	cc_set "$_ecn/roce_rp" dce_tcp_g 1019
	cc_set "$_ecn/roce_rp" dce_tcp_rtt 1
	cc_set "$_ecn/roce_rp" initial_alpha_value 1023
	cc_set "$_ecn/roce_rp" rate_reduce_monitor_period 4
	cc_set "$_ecn/roce_rp" rpg_ai_rate 5
	cc_set "$_ecn/roce_rp" rpg_byte_reset 32767
	cc_set "$_ecn/roce_rp" rpg_gd 11
	cc_set "$_ecn/roce_rp" rpg_hai_rate 50
	cc_set "$_ecn/roce_rp" rpg_max_rate 0
	cc_set "$_ecn/roce_rp" rpg_min_dec_fac 50
	cc_set "$_ecn/roce_rp" rpg_min_rate 1
	cc_set "$_ecn/roce_rp" rpg_threshold 1
	cc_set "$_ecn/roce_rp" rpg_time_reset 300
	cc_set "$_ecn/roce_np" cnp_802p_prio 6
	cc_set "$_ecn/roce_np" cnp_dscp 48
	cc_set "$_ecn/roce_np" min_time_between_cnps 4
	echo "host4: $1 DCQCN on priorities 3 (MLNX_OFED sysfs)"
}
dcqcn_inbox() { # NETDEV CC_PARAMS_DIR
	# The CNP's DSCP and priority are set whatever DCQCN does: a CNP in the wrong class is dropped or paused.
	put "$2/np_cnp_dscp" 48 || fail "$1: np_cnp_dscp not written"
	put "$2/np_cnp_prio_mode" 0 || fail "$1: np_cnp_prio_mode not written"
	put "$2/np_cnp_prio" 6 || fail "$1: np_cnp_prio not written"
	put "$2/rp_clamp_tgt_rate" 0 || fail "$1: rp_clamp_tgt_rate not written"
	put "$2/rp_clamp_tgt_rate_ati" 1 || fail "$1: rp_clamp_tgt_rate_ati not written"
	put "$2/rp_dce_tcp_g" 1019 || fail "$1: rp_dce_tcp_g not written"
	put "$2/rp_dce_tcp_rtt" 1 || fail "$1: rp_dce_tcp_rtt not written"
	put "$2/rp_initial_alpha_value" 1023 || fail "$1: rp_initial_alpha_value not written"
	put "$2/rp_rate_reduce_monitor_period" 4 || fail "$1: rp_rate_reduce_monitor_period not written"
	put "$2/rp_ai_rate" 5 || fail "$1: rp_ai_rate not written"
	put "$2/rp_byte_reset" 32767 || fail "$1: rp_byte_reset not written"
	put "$2/rp_gd" 11 || fail "$1: rp_gd not written"
	put "$2/rp_hai_rate" 50 || fail "$1: rp_hai_rate not written"
	put "$2/rp_max_rate" 0 || fail "$1: rp_max_rate not written"
	put "$2/rp_min_dec_fac" 50 || fail "$1: rp_min_dec_fac not written"
	put "$2/rp_min_rate" 1 || fail "$1: rp_min_rate not written"
	put "$2/rp_threshold" 1 || fail "$1: rp_threshold not written"
	put "$2/rp_time_reset" 300 || fail "$1: rp_time_reset not written"
	put "$2/np_min_time_between_cnps" 4 || fail "$1: np_min_time_between_cnps not written"
	# No per-priority DCQCN switch upstream: the firmware's ROCE_CC_PRIO_MASK_P1 decides (mlxconfig file, mask 8).
	echo "host4: $1 CNP DSCP 48 priority 6, DCQCN parameters (inbox mlx5 debugfs); DCQCN priorities per firmware mask 8"
}
dcqcn_nic() { # NETDEV
	if [ -d "$SYSFS/class/net/$1/ecn/roce_rp" ] && [ -d "$SYSFS/class/net/$1/ecn/roce_np" ]; then
		dcqcn_ofed "$1"
		return 0
	fi
	_pci=$(basename "$(readlink -f "$SYSFS/class/net/$1/device")")
	if [ -d "$DEBUGFS/mlx5/$_pci/cc_params" ]; then
		dcqcn_inbox "$1" "$DEBUGFS/mlx5/$_pci/cc_params"
		return 0
	fi
	fail "$1: CNP and DCQCN NOT set: no MLNX_OFED sysfs ($SYSFS/class/net/$1/ecn) and no inbox debugfs ($DEBUGFS/mlx5/$_pci/cc_params: mount -t debugfs none /sys/kernel/debug)"
}
dcqcn_nic eth0
dcqcn_nic eth1

if [ "$FAILED" -gt 0 ]; then
	echo "host4: $FAILED setting(s) not applied (see above)" >&2
	exit 1
fi
echo "host4: done"
