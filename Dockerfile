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
# outbox lives there (data.dir); mount a volume there to keep it across restarts (writable by uid 10001).
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
EXPOSE 8080
ENTRYPOINT ["java","-jar","/app/node.jar"]
CMD ["--role=all","--http.host=0.0.0.0","--data.dir=/app/data"]
