# Sourced by the benchmarks that serve a generated site from nginx on
# 127.0.0.1: installs nginx and GNU time from Debian when missing, and
# gives `nginx_work NAME` (a work folder, removed with nginx stopped on exit)
# and `nginx_serve ROOT PORT PROBE` (starts nginx on 127.0.0.1:PORT serving
# ROOT, robots.txt answering 404, and waits until PROBE answers).

need() { command -v "$1" >/dev/null 2>&1 || [ -x "/usr/sbin/$1" ]; }
if ! need nginx || [ ! -x /usr/bin/time ]; then
    apt-get update -qq
    apt-get install -y -qq nginx-light time >/dev/null 2>&1 || apt-get install -y -qq nginx time >/dev/null
fi
NGINX=$(command -v nginx || echo /usr/sbin/nginx)

nginx_work() {
    WORK=$(mktemp -d "/tmp/webdup-$1.XXXXXX")
    mkdir -p "$WORK/logs"
    chmod 755 "$WORK" # nginx workers run unprivileged and must read the pages
    trap 'if [ -f "$WORK/nginx.pid" ]; then kill "$(cat "$WORK/nginx.pid")" 2>/dev/null || true; fi; rm -rf "$WORK"' EXIT
}

nginx_serve() {
    local root=$1 port=$2 probe=$3
    cat > "$WORK/nginx.conf" <<CONF
worker_processes 1;
pid $WORK/nginx.pid;
error_log $WORK/logs/error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    sendfile on;
    keepalive_requests 1000000;
    keepalive_timeout 60s;
    types { text/html html; }
    default_type text/html;
    server {
        listen 127.0.0.1:$port;
        root $root;
        location = /robots.txt { return 404; }
    }
}
CONF
    "$NGINX" -c "$WORK/nginx.conf" -p "$WORK"
    for _ in $(seq 50); do
        curl -sf "http://127.0.0.1:$port$probe" >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    echo "nginx did not answer on 127.0.0.1:$port" >&2
    return 1
}
