#!/usr/bin/env bash
# The Kubernetes base on a real one-node cluster on this machine (README.md beside this file):
#
#   bash deploy/k8s/realnode/run.sh          # as root: build or reuse, start, apply, gate, tear down
#   bash deploy/k8s/realnode/run.sh build    # only build the cluster's binaries (cached)
#   bash deploy/k8s/realnode/run.sh clean    # only tear down what a killed run left
#
# It builds (or reuses) the cluster's binaries at pinned versions, builds the images locally,
# starts etcd, the control plane, containerd, the kubelet, kube-proxy and CoreDNS on loopback
# and a private bridge, applies deploy/overlays/small, waits for the Jobs, checks the gate, and
# tears everything down, comparing the host before and after. Exit 0 pass (or SKIP where it
# cannot run), 1 fail. OUT=DIR keeps the logs, the figures and the merged run there;
# REALNODE_KEEP=1 leaves the cluster up (KUBECONFIG printed; `run.sh clean` removes it).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../.." && pwd)"

# Pinned versions: the Kubernetes release whose k8s.io/api the repository uses, and the etcd
# and CoreDNS that release's kubeadm pins. The binaries are cached under their key.
K8S_VERSION=v1.37.2
ETCD_VERSION=v3.7.0
COREDNS_VERSION=v1.14.6
cache_root="${STREAMBENCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/streambench}"
bin="$cache_root/realnode-k8s-$K8S_VERSION-etcd-$ETCD_VERSION-coredns-$COREDNS_VERSION-$(go env GOVERSION 2>/dev/null || echo nogo)"

# Everything the run makes on the host is named after this, so a later run (or `clean`) finds
# what a killed one left: the state and run directories, the bridge, the nftables table.
name=streambench-realnode
state=/var/lib/$name          # etcd, containerd, the kubelet, PKI, the results volume
rund=/run/$name               # sockets, containerd's and runc's state
before=/var/tmp/$name.before  # the host as the run found it, until teardown has restored it
bridge=realnode0
node_ip=10.88.0.1             # the bridge's address: the node IP, the DNS server
pod_cidr=10.88.0.0/16
service_cidr=10.96.0.0/16
node=realnode
# The sysctls the kubelet, kube-proxy and the CNI plugins may set; each is restored.
sysctls=(vm.overcommit_memory vm.panic_on_oom kernel.panic kernel.panic_on_oops
	kernel.keys.root_maxkeys kernel.keys.root_maxbytes net.ipv4.ip_forward
	net.ipv4.conf.all.forwarding net.ipv4.conf.all.route_localnet
	net.bridge.bridge-nf-call-iptables net.bridge.bridge-nf-call-ip6tables
	net.netfilter.nf_conntrack_max net.netfilter.nf_conntrack_tcp_timeout_established
	net.netfilter.nf_conntrack_tcp_timeout_close_wait)

log() { echo "realnode: $*" >&2; }
die() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*"; exit 0; }
timings=()
# phase NAME FUNCTION: runs FUNCTION and records how long it took.
phase() {
	local start=$SECONDS
	log "== $1"
	"$2"
	timings+=("$1: $((SECONDS - start)) s")
}

preflight() {
	[ "$(id -u)" -eq 0 ] || skip "not root (a real node needs namespaces, mounts, cgroups, iptables)"
	local c
	for c in containerd runc ctr iptables nft ip ss openssl gcc go; do
		command -v "$c" >/dev/null ||
			skip "$c not found (Debian: apt-get install containerd runc iptables nftables iproute2 containernetworking-plugins busybox-static openssl gcc)"
	done
	for c in bridge host-local loopback; do
		[ -x "/usr/lib/cni/$c" ] || skip "/usr/lib/cni/$c not found (Debian: apt-get install containernetworking-plugins)"
	done
	file_is_static /bin/busybox || skip "no static /bin/busybox for the wait containers (Debian: apt-get install busybox-static)"
	[ -d /sys/fs/cgroup/memory ] || [ -f /sys/fs/cgroup/cgroup.controllers ] || skip "no memory cgroup"
	[ -d /proc/sys/net/bridge ] || skip "no bridge netfilter (net.bridge.bridge-nf-call-iptables): kube-proxy's Services need it"
}
file_is_static() { [ -x "$1" ] && ! ldd "$1" >/dev/null 2>&1; }

# --- build ---------------------------------------------------------------------------------
# Each binary comes from the Go module proxy at its pinned version, built niced into $bin;
# nothing is built when they are all there. Kubernetes is built in a throwaway module that
# requires k8s.io/kubernetes and replaces its staging modules (./staging/src/k8s.io/X in its
# own go.mod) by their published versions v0.MINOR.PATCH; etcd's server comes with it (the
# release requires that exact version). CoreDNS is built in a module of its own with only the
# plugins the Corefile below names, since the full set compiles every cloud provider's SDK.
k8s_cmds=(kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl)
build_binaries() {
	local b k8s_missing=0
	for b in "${k8s_cmds[@]}" etcd; do [ -x "$bin/$b" ] || k8s_missing=1; done
	if [ "$k8s_missing" -eq 0 ] && [ -x "$bin/coredns" ]; then
		log "reusing the binaries in $bin"
		return
	fi
	command -v go >/dev/null || die "go is not installed (the cluster's binaries are built with it)"
	log "building into $bin (once; about 25 minutes on two niced cores)"
	mkdir -p "$bin"
	local mod="$bin/.build"
	rm -rf "$mod" && mkdir -p "$mod/k8s" "$mod/coredns"
	export GOFLAGS="-buildvcs=false -mod=mod" CGO_ENABLED=0
	[ "$k8s_missing" -eq 0 ] || (cd "$mod/k8s" && build_k8s)
	[ -x "$bin/coredns" ] || (cd "$mod/coredns" && build_coredns)
	rm -rf "$mod"
	for b in "${k8s_cmds[@]}" etcd coredns; do [ -x "$bin/$b" ] || die "build left no $bin/$b"; done
}
build_k8s() {
	local m staging v=${K8S_VERSION#v1.} pkgs=() ld="-s -w" p b
	go mod init realnode/k8s >/dev/null 2>&1
	go mod edit -require="k8s.io/kubernetes@$K8S_VERSION"
	go mod download -json "k8s.io/kubernetes@$K8S_VERSION" >/dev/null
	staging=$(sed -n 's#^[[:space:]]*\(k8s.io/[^ ]*\) => ./staging/.*#\1#p' \
		"$(go env GOMODCACHE)/cache/download/k8s.io/kubernetes/@v/$K8S_VERSION.mod")
	for m in $staging; do go mod edit -replace="$m=$m@v0.$v"; done
	go mod edit -require="go.etcd.io/etcd/server/v3@$ETCD_VERSION"
	for b in "${k8s_cmds[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$b"); done
	# The version the binaries report (and derive their feature gates' defaults from).
	for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		ld+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=${v%%.*} -X $p.gitTreeState=clean"
	done
	nice -n 19 go build -trimpath -ldflags="$ld" -o "$bin/" "${pkgs[@]}"
	nice -n 19 go build -trimpath -ldflags="-s -w" -o "$bin/etcd" go.etcd.io/etcd/server/v3
}
build_coredns() {
	go mod init realnode/coredns >/dev/null 2>&1
	cat >main.go <<-'EOF'
		// CoreDNS with the plugins the one-node cluster's Corefile names.
		package main

		import (
			"github.com/coredns/coredns/coremain"
			_ "github.com/coredns/coredns/plugin/bind"
			_ "github.com/coredns/coredns/plugin/cache"
			_ "github.com/coredns/coredns/plugin/errors"
			_ "github.com/coredns/coredns/plugin/kubernetes"
		)

		func main() { coremain.Run() }
	EOF
	go mod edit -require="github.com/coredns/coredns@$COREDNS_VERSION"
	go mod tidy >/dev/null
	nice -n 19 go build -trimpath -ldflags="-s -w" -o "$bin/coredns" .
}

# --- images ----------------------------------------------------------------------------------
# No registry: each image is an OCI archive written here (one uncompressed layer, a config, a
# manifest, an index naming it) and imported into containerd's k8s.io namespace. streambench
# is the static binary the Dockerfile builds; busybox is Debian's static one (the base's wait
# containers); pause is pause.c, the pod sandbox.
images_dir=
build_images() {
	images_dir="$work/images"
	mkdir -p "$images_dir"/{streambench,pause,busybox/bin}
	(cd "$root" && CGO_ENABLED=0 nice -n 10 go build -trimpath -o "$images_dir/streambench/streambench" ./cmd/streambench)
	cp /bin/busybox "$images_dir/busybox/bin/busybox"
	local a
	for a in $(/bin/busybox --list); do [ "$a" = busybox ] || ln -s busybox "$images_dir/busybox/bin/$a"; done
	gcc -static -Os -o "$images_dir/pause/pause" "$here/pause.c"
	oci_archive "$images_dir/streambench" localhost/streambench:realnode '["/streambench"]' 65532
	oci_archive "$images_dir/busybox" localhost/busybox:realnode '["/bin/sh"]' 0
	oci_archive "$images_dir/pause" localhost/pause:realnode '["/pause"]' 65535
}
# oci_archive DIR REF ENTRYPOINT USER: DIR's files as a one-layer image REF in DIR.tar.
oci_archive() {
	local dir=$1 ref=$2 entry=$3 user=$4 out="$1.oci" layer config manifest
	mkdir -p "$out/blobs/sha256"
	tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf "$out/layer.tar" -C "$dir" .
	read -r layer layer_size < <(blob "$out" "$out/layer.tar")
	printf '{"architecture":"amd64","os":"linux","config":{"Entrypoint":%s,"User":"%s","Env":["PATH=/bin"]},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
		"$entry" "$user" "$layer" >"$out/config.json"
	read -r config config_size < <(blob "$out" "$out/config.json")
	printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%d},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%d}]}' \
		"$config" "$config_size" "$layer" "$layer_size" >"$out/manifest.json"
	read -r manifest manifest_size < <(blob "$out" "$out/manifest.json")
	printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%d,"annotations":{"io.containerd.image.name":"%s","org.opencontainers.image.ref.name":"%s"}}]}' \
		"$manifest" "$manifest_size" "$ref" "${ref##*:}" >"$out/index.json"
	echo '{"imageLayoutVersion":"1.0.0"}' >"$out/oci-layout"
	tar -cf "$dir.tar" -C "$out" oci-layout index.json blobs
}
# blob DIR FILE: FILE moved into DIR's blobs under its digest; prints the digest's hex and
# the size.
blob() {
	local sum size
	sum=$(sha256sum "$2" | cut -d' ' -f1)
	size=$(stat -c %s "$2")
	mv "$2" "$1/blobs/sha256/$sum"
	echo "$sum $size"
}
import_images() {
	local t
	for t in "$images_dir"/*.tar; do
		ctr --address "$rund/containerd.sock" -n k8s.io images import "$t" >/dev/null
	done
	ctr --address "$rund/containerd.sock" -n k8s.io images ls -q | grep '^localhost/' >&2
}

# --- the host before and after ---------------------------------------------------------------
# host_state prints what the run may change, one sorted line each: its processes, every mount,
# the netfilter rules, its links, addresses and routes, network namespaces, kubepods cgroups,
# the tracked sysctls, the paths a kubelet or containerd would create, listening sockets on
# the cluster's ports. Teardown must bring it back exactly.
host_state() (
	set +eo pipefail
	local pid s p
	for pid in $(our_pids); do echo "process $(cat "/proc/$pid/comm")"; done
	for pid in $(kubepods_pids); do echo "process in kubepods: $(cat "/proc/$pid/comm")"; done
	awk '{print "mount", $5}' /proc/self/mountinfo
	nft list ruleset 2>/dev/null | sed 's/^/nft /'
	iptables-legacy-save 2>/dev/null | grep -v '^#' | sed 's/^/iptables-legacy /'
	ip -o link show | grep -E "$bridge|cni|kube" | awk '{print "link", $2, $0 ~ /master/ ? "enslaved" : ""}'
	ip -o addr show | grep -F "${node_ip%.*}" | awk '{print "addr", $2, $4}'
	ip route show | grep -E "$bridge|10\.88\.|10\.96\." | sed 's/^/route /'
	ls /run/netns 2>/dev/null | sed 's/^/netns /'
	find /sys/fs/cgroup -maxdepth 2 -name 'kubepods*' 2>/dev/null | sed 's/^/cgroup /'
	for s in "${sysctls[@]}"; do echo "sysctl $s=$(sysctl -n "$s" 2>/dev/null)"; done
	for p in /var/log/containers /var/log/pods /var/lib/kubelet /var/lib/containerd /run/containerd \
		/etc/cni /opt/cni /opt/containerd /etc/kubernetes /var/lib/cni /run/netns "$state" "$rund"; do
		[ -e "$p" ] && echo "path $p"
	done
	ss -Hltnu | awk '{print $5}' | grep -E ':(53|2379|2380|6443|10248|10249|10250|10256|10257|10259)$' | sed 's/^/listen /'
)
save_host_state() {
	rm -rf "$before" && mkdir -p "$before"
	host_state | sort >"$before/state"
	nft list tables >"$before/tables" 2>/dev/null || true
	local s
	for s in "${sysctls[@]}"; do
		[ -e "/proc/sys/${s//.//}" ] && echo "$s=$(sysctl -n "$s")" >>"$before/sysctls"
	done
	true
}
check_host_restored() {
	host_state | sort >"$work/after"
	if ! diff "$before/state" "$work/after" >"$work/host.diff"; then
		sed 's/^/  /' "$work/host.diff" >&2
		die "teardown left the host changed (lines < before, > after)"
	fi
	log "host as before: $(wc -l <"$before/state") lines compared (processes, mounts, rules, links, routes, netns, cgroups, sysctls, paths, sockets)"
	rm -rf "$before"
}

# --- network ---------------------------------------------------------------------------------
# A bridge of our own with the node's address; pods get addresses on it and one route, to the
# Service range through the node, so nothing in a pod can reach beyond this machine. Only the
# bridge forwards (its own forwarding sysctl, not the global one), and an nftables table drops
# anything forwarded between the bridge and another interface.
start_network() {
	ip link add "$bridge" type bridge
	ip addr add "$node_ip/16" dev "$bridge"
	ip link set "$bridge" up
	sysctl -qw "net.ipv4.conf.$bridge.forwarding=1"
	sysctl -qw net.bridge.bridge-nf-call-iptables=1
	nft -f - <<-EOF
		table inet ${name//-/_} {
			chain forward {
				type filter hook forward priority -10; policy accept;
				iifname "$bridge" oifname != "$bridge" drop
				oifname "$bridge" iifname != "$bridge" drop
			}
		}
	EOF
}

# --- PKI and configuration -------------------------------------------------------------------
# One CA; the API server's serving certificate; one client certificate in system:masters that
# every component and kubectl use (a one-node test cluster, reachable from this machine only);
# the service-account signing key.
make_pki() {
	local pki="$state/pki"
	mkdir -p "$pki" && cd "$pki"
	openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 2 -subj "/CN=$name-ca" 2>/dev/null
	cert apiserver "/CN=kube-apiserver" "serverAuth" \
		"IP:127.0.0.1,IP:$node_ip,IP:${service_cidr%.*/*}.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
	cert admin "/O=system:masters/CN=$name-admin" "clientAuth" ""
	openssl genrsa -out sa.key 2048 2>/dev/null
	openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
	cat >admin.kubeconfig <<-EOF
		apiVersion: v1
		kind: Config
		clusters: [{name: $node, cluster: {server: "https://127.0.0.1:6443", certificate-authority: $pki/ca.crt}}]
		users: [{name: admin, user: {client-certificate: $pki/admin.crt, client-key: $pki/admin.key}}]
		contexts: [{name: $node, context: {cluster: $node, user: admin}}]
		current-context: $node
	EOF
	cd - >/dev/null
}
# cert NAME SUBJECT USAGE SANS: NAME.crt and NAME.key, signed by the CA.
cert() {
	local ext="extendedKeyUsage=$3"
	[ -z "$4" ] || ext+=$'\n'"subjectAltName=$4"
	openssl req -newkey rsa:2048 -nodes -keyout "$1.key" -subj "$2" -out "$1.csr" 2>/dev/null
	openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -out "$1.crt" \
		-extfile <(echo "$ext") 2>/dev/null
}

write_configs() {
	local pki="$state/pki" reserved
	mkdir -p "$state/cni/net.d" "$state/results" "$rund"
	# The results volume: a hostPath the pods (uid 65532) write; fsGroup does not apply to it.
	chown 65532:65532 "$state/results"
	cat >"$state/containerd.toml" <<-EOF
		version = 2
		root = "$state/containerd"
		state = "$rund/containerd"
		# This VM grants no CAP_SYS_RESOURCE: nothing may lower an oom_score_adj.
		oom_score = 0
		disabled_plugins = ["io.containerd.internal.v1.opt", "io.containerd.snapshotter.v1.aufs",
		  "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
		  "io.containerd.snapshotter.v1.devmapper", "io.containerd.tracing.processor.v1.otlp"]
		[grpc]
		  address = "$rund/containerd.sock"
		[ttrpc]
		  address = "$rund/containerd.sock.ttrpc"
		[plugins."io.containerd.grpc.v1.cri"]
		  sandbox_image = "localhost/pause:realnode"
		  restrict_oom_score_adj = true
		  stream_server_address = "127.0.0.1"
		  [plugins."io.containerd.grpc.v1.cri".containerd]
		    snapshotter = "overlayfs"
		    default_runtime_name = "runc"
		    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
		      runtime_type = "io.containerd.runc.v2"
		      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
		        SystemdCgroup = false
		        Root = "$rund/runc"
		  [plugins."io.containerd.grpc.v1.cri".cni]
		    bin_dir = "/usr/lib/cni"
		    conf_dir = "$state/cni/net.d"
	EOF
	# isGateway false: the bridge already has the node's address, and the plugin would turn
	# on forwarding for every interface (net.ipv4.ip_forward) to be one.
	cat >"$state/cni/net.d/10-realnode.conflist" <<-EOF
		{"cniVersion": "1.0.0", "name": "realnode", "plugins": [
		  {"type": "bridge", "bridge": "$bridge", "isGateway": false, "ipMasq": false, "hairpinMode": true,
		   "ipam": {"type": "host-local", "dataDir": "$state/cni/ipam",
		            "ranges": [[{"subnet": "$pod_cidr", "rangeStart": "${node_ip%.*}.10", "gateway": "$node_ip"}]],
		            "routes": [{"dst": "$service_cidr", "gw": "$node_ip"}]}},
		  {"type": "loopback"}]}
	EOF
	# A node of 2 cores and 4 GiB: the machine's memory past 4 GiB is reserved for the system,
	# so the kubepods cgroup's limit and the node's allocatable are what a small node has.
	reserved=$(($(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 - 4096))
	echo "nameserver $node_ip" >"$state/resolv.conf"
	cat >"$state/kubelet.yaml" <<-EOF
		apiVersion: kubelet.config.k8s.io/v1beta1
		kind: KubeletConfiguration
		# cgroup v1 on this machine; no CAP_SYS_RESOURCE to lower the kubelet's oom_score_adj.
		failCgroupV1: false
		cgroupDriver: cgroupfs
		oomScoreAdj: 0
		containerRuntimeEndpoint: unix://$rund/containerd.sock
		address: $node_ip
		healthzBindAddress: 127.0.0.1
		readOnlyPort: 0
		authentication:
		  anonymous: {enabled: false}
		  webhook: {enabled: true}
		  x509: {clientCAFile: $pki/ca.crt}
		authorization: {mode: Webhook}
		clusterDNS: [$node_ip]
		clusterDomain: cluster.local
		resolvConf: $state/resolv.conf
		podLogsDir: $state/pod-logs
		systemReserved: {memory: ${reserved}Mi}
		evictionHard: {memory.available: 100Mi, nodefs.available: 5%, imagefs.available: 5%}
		serializeImagePulls: false
		maxPods: 30
	EOF
	cat >"$state/kube-proxy.yaml" <<-EOF
		apiVersion: kubeproxy.config.k8s.io/v1alpha1
		kind: KubeProxyConfiguration
		clientConnection: {kubeconfig: $pki/admin.kubeconfig}
		mode: iptables
		hostnameOverride: $node
		clusterCIDR: $pod_cidr
		healthzBindAddress: 127.0.0.1:10256
		metricsBindAddress: 127.0.0.1:10249
		oomScoreAdj: 0
		nodePortAddresses: ["$node_ip/32"]
		iptables: {localhostNodePorts: false}
		# Leave the host's conntrack sysctls as they are.
		conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
	EOF
	cat >"$state/Corefile" <<-EOF
		cluster.local:53 {
		  bind $node_ip
		  errors
		  kubernetes cluster.local {
		    kubeconfig $pki/admin.kubeconfig $node
		  }
		  cache 30
		}
	EOF
}

# --- the cluster -----------------------------------------------------------------------------
pids=()
# start NAME ARGS...: runs ARGS in its own process group, logging to $work/logs/NAME.log.
start() {
	local n=$1
	shift
	setsid "$@" >"$work/logs/$n.log" 2>&1 &
	pids+=("$!")
	disown "$!" # teardown ends it; no "Killed" notice
}
# wait_for WHAT SECONDS COMMAND...: polls COMMAND once a second until it succeeds.
wait_for() {
	local what=$1 secs=$2 i
	shift 2
	for ((i = 0; i < secs; i++)); do
		"$@" >/dev/null 2>&1 && return
		sleep 1
	done
	die "$what not ready after $secs s"
}
k() { "$bin/kubectl" --kubeconfig "$state/pki/admin.kubeconfig" "$@"; }
start_cluster() {
	local pki="$state/pki"
	mkdir -p "$work/logs"
	start containerd containerd --config "$state/containerd.toml"
	start etcd "$bin/etcd" --name "$node" --data-dir "$state/etcd" \
		--listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
		--listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
		--initial-cluster "$node=http://127.0.0.1:2380"
	start kube-apiserver "$bin/kube-apiserver" --etcd-servers=http://127.0.0.1:2379 \
		--bind-address=127.0.0.1 --secure-port=6443 --advertise-address="$node_ip" \
		--tls-cert-file="$pki/apiserver.crt" --tls-private-key-file="$pki/apiserver.key" \
		--client-ca-file="$pki/ca.crt" --authorization-mode=Node,RBAC \
		--service-account-issuer=https://kubernetes.default.svc --service-account-key-file="$pki/sa.pub" \
		--service-account-signing-key-file="$pki/sa.key" --service-cluster-ip-range="$service_cidr" \
		--kubelet-client-certificate="$pki/admin.crt" --kubelet-client-key="$pki/admin.key" \
		--kubelet-preferred-address-types=InternalIP --allow-privileged=false --profiling=false
	wait_for "kube-apiserver" 120 k get --raw /readyz
	start kube-controller-manager "$bin/kube-controller-manager" --kubeconfig="$pki/admin.kubeconfig" \
		--bind-address=127.0.0.1 --leader-elect=false --root-ca-file="$pki/ca.crt" \
		--service-account-private-key-file="$pki/sa.key" --profiling=false
	start kube-scheduler "$bin/kube-scheduler" --kubeconfig="$pki/admin.kubeconfig" \
		--bind-address=127.0.0.1 --leader-elect=false --profiling=false
	wait_for containerd 60 ctr --address "$rund/containerd.sock" version
	start kubelet "$bin/kubelet" --config="$state/kubelet.yaml" --kubeconfig="$pki/admin.kubeconfig" \
		--root-dir="$state/kubelet" --cert-dir="$state/kubelet/pki" --hostname-override="$node" --node-ip="$node_ip"
	start kube-proxy "$bin/kube-proxy" --config="$state/kube-proxy.yaml"
	start coredns "$bin/coredns" -conf "$state/Corefile"
	wait_for "node $node" 120 k get node "$node"
	k wait --for=condition=Ready "node/$node" --timeout=120s >/dev/null ||
		die "node $node not Ready"
	k get node -o wide >&2
}

# --- the run ---------------------------------------------------------------------------------
run_id=
apply_base() {
	run_id="realnode-$(date -u +%Y%m%d-%H%M%S)"
	local o="$work/overlay"
	mkdir -p "$o"
	# deploy/overlays/small with this run's parameters, the local images and a volume for the
	# claim: a hostPath on the one node, bound to the base's claim. (kustomize takes no
	# absolute path to a base.)
	cat >"$o/kustomization.yaml" <<-EOF
		apiVersion: kustomize.config.k8s.io/v1beta1
		kind: Kustomization
		resources:
		  - $(realpath --relative-to="$o" "$root/deploy/overlays/small")
		  - results-pv.yaml
		configMapGenerator:
		  - name: streambench-run
		    behavior: replace
		    literals:
		      - RUN_ID=$run_id
		      - START_AT=$(date -u -d "+${START_LEAD:-40} seconds" +%Y-%m-%dT%H:%M:%SZ)
		images:
		  - {name: streambench, newName: localhost/streambench, newTag: realnode}
		  - {name: busybox, newName: localhost/busybox, newTag: realnode}
	EOF
	cat >"$o/results-pv.yaml" <<-EOF
		apiVersion: v1
		kind: PersistentVolume
		metadata:
		  name: $name-results
		spec:
		  capacity: {storage: 1Gi}
		  accessModes: [ReadWriteMany]
		  persistentVolumeReclaimPolicy: Retain
		  hostPath: {path: $state/results, type: Directory}
		  claimRef: {namespace: default, name: streambench-results}
	EOF
	k apply -k "$o" >&2
}
# Every pod's peak memory, CPU time and CFS throttling, read from its cgroups while it runs
# (a finished pod's are removed): "UID BYTES CPU-NS PERIODS THROTTLED THROTTLED-NS" lines.
sample_usage() {
	local d rel
	while :; do
		for d in /sys/fs/cgroup/memory/kubepods/pod* /sys/fs/cgroup/memory/kubepods/*/pod*; do
			[ -d "$d" ] || continue
			rel=${d#/sys/fs/cgroup/memory/}
			echo "${d##*/pod} $(cat "$d/memory.max_usage_in_bytes") $(cat "/sys/fs/cgroup/cpuacct/$rel/cpuacct.usage")" \
				"$(awk '{printf "%s ", $2}' "/sys/fs/cgroup/cpu/$rel/cpu.stat")"
		done 2>/dev/null >>"$work/usage"
		sleep 2
	done
}
job_done() { # job_done JOB: prints Complete or Failed once the Job has that condition
	k get job "$1" -o jsonpath='{range .status.conditions[?(@.status=="True")]}{.type}{"\n"}{end}' |
		grep -xE 'Complete|Failed' | head -1 || true
}
wait_for_jobs() {
	sample_usage &
	pids+=("$!")
	local deadline=$((SECONDS + ${JOB_TIMEOUT:-900})) merge=
	while [ -z "$merge" ]; do
		[ "$SECONDS" -lt "$deadline" ] || die "the merge Job has not ended after ${JOB_TIMEOUT:-900} s"
		sleep 10
		merge=$(job_done streambench-merge)
		log "pods: $(k get pods --no-headers 2>/dev/null | awk '{printf "%s %s, ", $1, $3}')"
	done
	applied_to_gate=$((SECONDS - apply_start))
}
check_run() {
	local ok=1 load merge gate succeeded
	k get node "$node" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' | grep -qx True ||
		{ log "node $node not Ready at the end"; ok=0; }
	load=$(job_done streambench-load)
	succeeded=$(k get job streambench-load -o jsonpath='{.status.succeeded}')
	merge=$(job_done streambench-merge)
	gate=$(k get pods -l batch.kubernetes.io/job-name=streambench-merge \
		-o jsonpath='{.items[0].status.containerStatuses[?(@.name=="gate")].state.terminated.exitCode}')
	log "load Job: ${load:-running} ($succeeded of 4 shards succeeded); merge Job: $merge; gate exit ${gate:-none}"
	echo "--- the gate's verdict (kubectl logs job/streambench-merge -c gate)" >&2
	k logs job/streambench-merge -c gate >&2 || true
	[ "$load" = Complete ] && [ "$succeeded" = 4 ] || { log "load Job not Complete with 4 shards"; ok=0; }
	[ "$merge" = Complete ] || { log "merge Job not Complete"; ok=0; }
	[ "$gate" = 0 ] || { log "gate exit ${gate:-none}, want 0"; ok=0; }
	# No container was killed at its limit or restarted.
	local killed
	killed=$(k get pods -o jsonpath='{range .items[*]}{range .status.initContainerStatuses[*]}{.name} {.state.terminated.reason} {.restartCount}{"\n"}{end}{range .status.containerStatuses[*]}{.name} {.state.terminated.reason} {.restartCount}{"\n"}{end}{end}' |
		awk '$2 == "OOMKilled" || $NF > 0')
	[ -z "$killed" ] || { log "containers OOMKilled or restarted: $killed"; ok=0; }
	report_figures
	[ "$ok" -eq 1 ] || die "the base did not pass on the real node (logs above)"
}
report_figures() {
	local f="$work/figures.txt" merged="$state/results/$run_id/merged/summary.json"
	{
		echo "node: $(k get node "$node" -o jsonpath='capacity cpu {.status.capacity.cpu}, memory {.status.capacity.memory}; allocatable cpu {.status.allocatable.cpu}, memory {.status.allocatable.memory}')"
		# cgroup v1, as on this machine (v2 has no per-pod figures here).
		local limit=/sys/fs/cgroup/memory/kubepods/memory.limit_in_bytes
		[ ! -f "$limit" ] || echo "kubepods memory limit: $(($(cat "$limit") >> 20)) MiB"
		echo "apply to gate: $applied_to_gate s"
		if command -v jq >/dev/null && [ -f "$merged" ]; then
			jq -r '"merged run: \(.shards | length) shards, sessions started \([.. | objects | .sessions_started? // empty] | first), ok \([.. | objects | .sessions_ok? // empty] | first), failed \([.. | objects | .sessions_failed? // empty] | first)"' "$merged"
		fi
		printf '%-36s %8s %8s %13s %10s   %s\n' pod "peak mem" "CPU" "throttled" "throttled" \
			"streambench containers: requests / limits"
		k get pods -o jsonpath='{range .items[*]}{.metadata.uid} {.metadata.name}{"\n"}{end}' |
			while read -r uid pod; do
				awk -v u="$uid" -v u2="${uid//-/_}" -v pod="$pod" '$1 == u || $1 == u2 {
						for (i = 2; i <= 6; i++) if ($i > m[i]) m[i] = $i
					} END {
						printf "%-36s %4.0f MiB %6.1f s %5d of %-5d %8.1f s   ", pod, m[2] / 1048576, m[3] / 1e9, m[5], m[4], m[6] / 1e9
					}' "$work/usage"
				k get pod "$pod" -o jsonpath='{range .spec.initContainers[?(@.image=="localhost/streambench:realnode")]}{.name} {.resources.requests.cpu}/{.resources.requests.memory} {.resources.limits.cpu}/{.resources.limits.memory}; {end}{range .spec.containers[?(@.image=="localhost/streambench:realnode")]}{.name} {.resources.requests.cpu}/{.resources.requests.memory} {.resources.limits.cpu}/{.resources.limits.memory}; {end}'
				echo
			done
	} >"$f"
	cat "$f" >&2
	if [ -n "${OUT:-}" ]; then
		mkdir -p "$OUT"
		cp "$f" "$OUT/"
		cp -r "$state/results/$run_id" "$OUT/" 2>/dev/null || true
	fi
}

# --- teardown --------------------------------------------------------------------------------
# Everything found by name, not by what this run remembers, so it also cleans up after a run
# that was killed: our processes (their command lines name $state or $rund), every process in
# a kubepods cgroup, the mounts under our directories and the pods' network namespaces, the
# kubepods cgroups, kube-proxy's and the kubelet's rules, our nftables table and bridge, the
# sysctls as they were, and our directories.
teardown() {
	set +e
	local pid p
	# comm is at most 15 characters: kube-controller(-manager), containerd-shim(-runc-v2).
	stop_processes "kubelet kube-proxy coredns kube-scheduler kube-controller"
	for _ in 1 2 3; do
		for pid in $(kubepods_pids); do kill -9 "$pid" 2>/dev/null; done
		sleep 0.5
	done
	stop_processes "containerd-shim containerd"
	# The API server before etcd: without it, its shutdown waits on storage until SIGKILL.
	stop_processes kube-apiserver
	stop_processes etcd
	# Our own pids (the usage sampler) and anything else of ours still there.
	for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
	stop_processes ""
	unmount_ours
	for p in /run/netns/cni-*; do [ -e "$p" ] && rm -f "$p"; done
	for p in /sys/fs/cgroup/*/kubepods*; do
		[ -d "$p" ] && find "$p" -depth -type d -exec rmdir {} + 2>/dev/null
	done
	if [ -x "$bin/kube-proxy" ]; then
		"$bin/kube-proxy" --cleanup >/dev/null 2>&1 || true
	fi
	remove_rules
	ip link del "$bridge" 2>/dev/null || true
	restore_sysctls
	rm -rf "$state" "$rund"
	remove_new_paths
	set -e
}
# our_pids: our processes, found by their command lines naming our directories ([/] keeps
# grep from finding itself); kubepods_pids: the pods' processes.
our_pids() {
	grep -laE "[/](var/lib|run)/$name/" /proc/[0-9]*/cmdline 2>/dev/null | cut -d/ -f3 | grep -vx "$$"
}
alive() { # alive PID...: whether any of them still runs
	local pid
	for pid in "$@"; do kill -0 "$pid" 2>/dev/null && return 0; done
	return 1
}
kubepods_pids() { grep -l kubepods /proc/[0-9]*/cgroup 2>/dev/null | cut -d/ -f3; }
# stop_processes "NAMES": SIGTERM our processes with those names (all of ours when empty),
# then SIGKILL what is left after 10 s.
stop_processes() {
	local pid comm list=()
	for pid in $(our_pids); do
		comm=$(cat "/proc/$pid/comm" 2>/dev/null) || continue
		[ -z "$1" ] || [[ " $1 " == *" $comm "* ]] || continue
		list+=("$pid")
	done
	[ "${#list[@]}" -gt 0 ] || return 0
	kill "${list[@]}" 2>/dev/null
	for _ in $(seq 1 100); do
		alive "${list[@]}" || return 0
		sleep 0.1
	done
	log "still running 10 s after SIGTERM, killed: $(for pid in "${list[@]}"; do cat "/proc/$pid/comm" 2>/dev/null; done | tr '\n' ' ')"
	kill -9 "${list[@]}" 2>/dev/null
	sleep 0.5
}
unmount_ours() {
	local m
	awk '{print $5}' /proc/self/mountinfo | grep -E "^($state|$rund|/run/netns/cni-)" | sort -r |
		while read -r m; do umount "$m" 2>/dev/null || umount -l "$m"; done
}
# remove_rules deletes every nftables table that was not there before the run (kube-proxy's
# and the kubelet's iptables-nft tables, ours), or, with no record of before, ours and the
# kubelet's KUBE- chains (kube-proxy --cleanup has removed its own).
remove_rules() {
	local fam tbl chain
	nft list tables 2>/dev/null | while read -r _ fam tbl; do
		if [ -f "$before/tables" ]; then
			grep -qxF "table $fam $tbl" "$before/tables" || nft delete table "$fam" "$tbl"
		elif [ "$tbl" = "${name//-/_}" ]; then
			nft delete table "$fam" "$tbl"
		else
			nft list table "$fam" "$tbl" | awk '$1 == "chain" && $2 ~ /^KUBE-/ {print $2}' |
				while read -r chain; do
					nft flush chain "$fam" "$tbl" "$chain" && nft delete chain "$fam" "$tbl" "$chain"
				done
		fi
	done
}
restore_sysctls() {
	[ -f "$before/sysctls" ] || return 0
	local line
	while read -r line; do
		[ "$(sysctl -n "${line%%=*}")" = "${line#*=}" ] || sysctl -qw "$line"
	done <"$before/sysctls"
}
# Paths a kubelet or containerd creates outside our directories whatever they are told,
# removed if the record of before does not have them: containerd 1.6 puts its shims' sockets
# in /run/containerd/s and libcni its cache in /var/lib/cni, the kubelet its device-plugin
# socket in /var/lib/kubelet/device-plugins. Others may use /run/netns (ip netns add): removed
# only if empty.
remove_new_paths() {
	local p
	for p in /var/log/containers /var/log/pods /run/containerd /var/lib/cni /var/lib/kubelet; do
		! new_path "$p" || rm -rf "$p"
	done
	for p in /run/netns /opt/containerd; do
		! new_path "$p" || rmdir "$p" 2>/dev/null
	done
	true
}
new_path() { [ -e "$1" ] && [ -f "$before/state" ] && ! grep -qxF "path $1" "$before/state"; }

on_exit() {
	local rc=$?
	trap - EXIT INT TERM
	set +e
	if [ -n "${REALNODE_KEEP:-}" ]; then
		log "REALNODE_KEEP: the cluster stays up: KUBECONFIG=$state/pki/admin.kubeconfig $bin/kubectl; logs in $work/logs; 'run.sh clean' removes it"
		exit "$rc"
	fi
	if [ "$rc" -ne 0 ] && [ -d "$work/logs" ]; then
		for f in "$work"/logs/*.log; do
			[ -s "$f" ] && { echo "--- $(basename "$f") (last 15 lines)" >&2; tail -n 15 "$f" >&2; }
		done
		[ -z "${OUT:-}" ] || { mkdir -p "$OUT/logs" && cp "$work"/logs/*.log "$OUT/logs/"; }
	fi
	local start=$SECONDS
	teardown
	timings+=("teardown: $((SECONDS - start)) s")
	if [ -f "$before/state" ]; then
		( check_host_restored ) || rc=1
	fi
	rm -rf "$work"
	printf '  %s\n' "${timings[@]}" >&2
	[ "$rc" -ne 0 ] || echo "PASS: the base on a real node: node Ready, 4 shards Complete, merge Complete, gate exit 0, host restored"
	exit "$rc"
}

main() {
	case "${1:-run}" in
	build)
		phase build build_binaries
		printf '  %s\n' "${timings[@]}" >&2
		return
		;;
	clean)
		preflight
		teardown
		if [ -f "$before/state" ]; then work=$(mktemp -d) && check_host_restored && rm -rf "$work"; fi
		log "cleaned"
		return
		;;
	run) ;;
	*) die "usage: run.sh [build|clean]" ;;
	esac
	preflight
	work=$(mktemp -d)
	trap on_exit EXIT
	trap 'exit 130' INT TERM
	phase build build_binaries
	phase images build_images
	# A killed run's leftovers go first, so "before" is the host as it was before that run.
	phase "clean up a previous run" teardown
	# A killed run's record of the host before it: the clean-up should have restored it. A
	# difference is reported, not fatal (the host may have changed since), and the record is
	# replaced, so no run stays stuck on it.
	if [ -f "$before/state" ]; then
		if host_state | sort | diff "$before/state" - >"$work/killed.diff"; then
			log "a killed run's leftovers removed: the host is as it was before that run"
		else
			log "WARNING: the host differs from the record made before a killed run (< then, > now):"
			sed 's/^/  /' "$work/killed.diff" >&2
		fi
	fi
	save_host_state
	phase network start_network
	phase "pki and configs" make_pki
	write_configs
	phase "start the cluster (to node Ready)" start_cluster
	phase "import images" import_images
	apply_start=$SECONDS
	phase apply apply_base
	phase "wait for the Jobs (to the gate)" wait_for_jobs
	phase check check_run
}
main "$@"
