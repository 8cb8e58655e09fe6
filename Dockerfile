# Runtime image of the inspection node. It only runs the prebuilt fat jar, so build that first:
#   ./run.sh demo   (or ./run.sh test, or mvn -q -B package -DskipTests)  ->  target/node.jar
#   docker build -t inspection-node .
# PostgreSQL, RabbitMQ and Redis are not part of the image; point the node at them with INSPECT_*
# environment variables (every config key has one), e.g.
#   docker run -p 8080:8080 -e INSPECT_PG_HOST=db -e INSPECT_PG_PASSWORD=... \
#     -e INSPECT_RABBIT_HOST=mq -e INSPECT_REDIS_URL=redis://cache:6379 \
#     -e INSPECT_API_TOKEN="$(openssl rand -hex 32)" -e INSPECT_CONSOLE_PASSWORD=... inspection-node
# The scheduler role (part of --role=all) refuses to start without a real API token and console password
# (there are no defaults); add --demo.mode=true to have them generated and printed once instead.
# The probe keeps its outbox in data.dir (/app/data here); mount a volume there to keep it across restarts.
FROM eclipse-temurin:17-jre
WORKDIR /app
COPY target/node.jar /app/node.jar
COPY conf /app/conf
EXPOSE 8080
ENTRYPOINT ["java","-jar","/app/node.jar"]
CMD ["--role=all","--http.host=0.0.0.0"]
