# Lancelot in a container: `docker build -t lancelot .` then
# `docker run -p 127.0.0.1:8080:8080 -e LANCELOT_WEB_HOST=0.0.0.0 -v lancelot:/data lancelot`
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    LANCELOT_HOME=/data \
    LANCELOT_CONFIG=/app/config/lancelot.yaml

RUN useradd --create-home --uid 10001 lancelot \
    && mkdir -p /data && chown lancelot /data

WORKDIR /app
COPY pyproject.toml README.md ./
COPY bot ./bot
COPY core ./core
COPY soul ./soul
COPY skills ./skills
COPY config ./config
RUN pip install --no-cache-dir .

USER lancelot
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=3s CMD python -c "import urllib.request,sys; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8080/health/live').status == 200 else 1)"
CMD ["lancelot", "run"]
