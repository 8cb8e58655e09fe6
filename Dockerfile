# Runtime image of the inspection node. It only runs the prebuilt fat jar, so build that first:
#   ./run.sh demo   (or ./run.sh test, or mvn -q -B package -DskipTests)  ->  target/node.jar
#   docker build -t inspection-node .
# PostgreSQL, RabbitMQ and Redis are not part of the image; point the node at them with INSPECT_*
# environment variables (every config key has one). Secrets are better passed as files: INSPECT_X_FILE
# reads key X from a file (e.g. a Docker/Kubernetes secret), so they are not in `docker inspect`:
#   docker run -p 8080:8080 -e INSPECT_PG_HOST=db -e INSPECT_PG_USER=inspection \
#     -e INSPECT_PG_PASSWORD_FILE=/run/secrets/pg -e INSPECT_RABBIT_HOST=mq -e INSPECT_RABBIT_USER=inspection \
#     -e INSPECT_RABBIT_PASSWORD_FILE=/run/secrets/mq -e INSPECT_REDIS_URL=redis://cache:6379 \
#     -e INSPECT_API_TOKEN_FILE=/run/secrets/api -e INSPECT_CONSOLE_PASSWORD_FILE=/run/secrets/console \
#     -v /path/to/secrets:/run/secrets:ro inspection-node
# Outside demo mode the node refuses RabbitMQ's guest account and a PostgreSQL superuser
# (security.allow.insecure.credentials=true overrides that, for local tests only), and the scheduler role
# (part of --role=all) refuses to start without a real API token and console password; add
# --demo.mode=true to have those generated and printed once instead.
# The node runs as the unprivileged user inspection (uid 10001), which owns only /app/data: the probe's
# outbox lives there (data.dir), declared as a VOLUME; mount a named volume there to keep it across
# restarts and upgrades (writable by uid 10001).
# Stopping: SIGTERM starts the graceful stop, which may take shutdown.grace.ms (25 s). Docker's default
# stop timeout (10 s) would SIGKILL it half-way: run with --stop-timeout 40 (compose: stop_grace_period: 40s;
# Kubernetes: terminationGracePeriodSeconds: 40). A drained worker exits with code 4 (see --help): with
# Docker's restart policies that code cannot be exempted, so prefer scaling the service down after a drain.
# Memory: the heap is sized from the container's memory limit (JDK_JAVA_OPTIONS, MaxRAMPercentage=70);
# give the container a limit (docker run -m 2g), or set JDK_JAVA_OPTIONS yourself.
# ICMP checks (check_type icmp) use unprivileged ICMP datagram sockets here: Docker 20.10+ sets the namespaced
# sysctl net.ipv4.ping_group_range to every group in a container, so uid 10001 may open one. Where a runtime does
# not, pass --sysctl net.ipv4.ping_group_range="0 2147483647" (Kubernetes: securityContext.sysctls, or containerd's
# enable_unprivileged_icmp); --cap-add NET_RAW alone does not help a non-root user. Without an ICMP socket, icmp
# devices are answered DOWN with an error naming both ways; other checks are unaffected.
# Health: HEALTHCHECK runs a tiny Java check (the image has no curl) against /health/ready on
# 127.0.0.1 and the port in INSPECT_HTTP_PORT (default 8080); /health/ready is 200 once every part of
# the role is ready. With http.tls.* set, override it (docker run --health-cmd) with an https URL.
FROM eclipse-temurin:17-jre
RUN groupadd --system --gid 10001 inspection \
 && useradd --system --uid 10001 --gid inspection --home-dir /app --no-create-home --shell /usr/sbin/nologin inspection \
 && mkdir -p /app/data \
 && chown inspection:inspection /app/data \
 && chmod 0750 /app/data
WORKDIR /app
COPY target/node.jar /app/node.jar
COPY conf /app/conf
USER 10001:10001
VOLUME ["/app/data"]
EXPOSE 8080
STOPSIGNAL SIGTERM
ENV JDK_JAVA_OPTIONS="-XX:MaxRAMPercentage=70 -XX:+ExitOnOutOfMemoryError -XX:+UseTransparentHugePages"
# start-period: start-up waits up to 120 s for PostgreSQL and RabbitMQ
HEALTHCHECK --interval=15s --timeout=10s --start-period=120s --retries=3 \
  CMD ["java","-Xmx24m","-XX:TieredStopAtLevel=1","-XX:+UseSerialGC","-cp","/app/node.jar","dev.inspection.node.ReadyCheck"]
ENTRYPOINT ["java","-jar","/app/node.jar"]
CMD ["--role=all","--http.host=0.0.0.0","--data.dir=/app/data"]
