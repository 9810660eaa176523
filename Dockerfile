FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 APPLIANCE_DATA_DIR=/data
WORKDIR /app
COPY pyproject.toml README.md cli.py ./
COPY appliance ./appliance
RUN pip install --no-cache-dir . \
    && useradd --system --uid 10001 --home-dir /data appliance \
    && mkdir -p /data && chown appliance /data
USER appliance
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8080/healthz')"
CMD ["appliance", "serve", "--host", "0.0.0.0"]
