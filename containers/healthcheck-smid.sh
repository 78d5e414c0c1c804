#!/bin/bash
# The exporter image's health check: GET /healthz from hipstack-smid on this container's loopback
# (port $HIPSTACK_SMID_PORT, default 9400). Healthy when it answers 200. bash's /dev/tcp: the image
# carries no HTTP client.
set -u
port=${HIPSTACK_SMID_PORT:-9400}
exec 3<>"/dev/tcp/127.0.0.1/$port" || exit 1
printf 'GET /healthz HTTP/1.0\r\nHost: localhost\r\n\r\n' >&3
IFS= read -r -t 10 status <&3 || exit 1
[[ $status == "HTTP/1."[01]" 200 "* ]]
