package io.arrowipc.spark;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An http(s):// input read with Range requests (java.net.http): each read is one GET of the bytes
 * it needs, answered 206 Partial Content. The first request (bytes 0-8191) also learns the size
 * from Content-Range; small reads fetch 8 KiB around them and keep it, so a footer's trailer and
 * the footer, or a message's prefix and its metadata, cost one request. Ranges read together
 * (the wanted columns of a batch, already coalesced) are requested concurrently, at most
 * MAX_IN_FLIGHT at a time. A network failure or a 408, 429, 500, 502, 503 or 504 answer is
 * retried (ATTEMPTS in all, waiting RETRY_WAIT_MS, then twice that, and so on); any other answer,
 * or the last failure, is an IpcException naming the URL.
 */
final class HttpSource implements Source {
  /** Reads smaller than this fetch this much (at most the whole input) and keep it. */
  static final int SMALL_READ = 8 << 10;
  /** The largest range a willRead hint fetches ahead (larger metadata is read as asked). */
  static final long MAX_HINT = 16 << 20;
  /** The most requests readRanges has in flight at once. */
  static final int MAX_IN_FLIGHT = 8;
  /** Tries of one request before its failure is final. */
  static final int ATTEMPTS = 3;
  /** The wait before the first retry; it doubles for each further one. */
  static final long RETRY_WAIT_MS = 200;
  private static final Duration TIMEOUT = Duration.ofMinutes(2);
  private static final Pattern CONTENT_RANGE = Pattern.compile("bytes (\\d+)-(\\d+)/(\\d+|\\*)");
  private static final Pattern UNSATISFIED = Pattern.compile("bytes \\*/(\\d+)");
  private static volatile HttpClient client;

  private final String url;
  private final URI uri;
  private final long size;
  private final String version;
  private byte[] window;            // bytes [windowStart, windowStart + window.length), kept
  private long windowStart;

  HttpSource(String url) {
    this.url = url;
    try {
      this.uri = URI.create(url);
    } catch (IllegalArgumentException e) {
      throw new IpcException("arrowipc: " + url + " is not a valid URL: " + e.getMessage(), e);
    }
    HttpResponse<byte[]> r = send(request(0, SMALL_READ - 1), 0, SMALL_READ - 1);
    version = versionOf(r);
    if (r.statusCode() == 416) {                  // an empty object has no byte 0
      Matcher m = UNSATISFIED.matcher(r.headers().firstValue("Content-Range").orElse(""));
      if (!m.matches() || Long.parseLong(m.group(1)) != 0) throw status(r, 0, SMALL_READ - 1);
      size = 0;
      window = new byte[0];
      return;
    }
    long[] range = checked(r, 0, SMALL_READ - 1);
    size = range[2];
    window = r.body();
    windowStart = 0;
  }

  /**
   * What tells this object's content from a rewrite of it, from the first answer's headers: a
   * strong ETag, else Last-Modified; null when there is neither. A weak ETag (W/...) promises
   * equivalent content, not the same bytes, so it is not used. Last-Modified counts whole
   * seconds, so it is used only when the answer's Date is at least MODIFIED_SETTLED later:
   * a rewrite after this read then has another Last-Modified.
   */
  String version() {
    return version;
  }

  /** How long before an answer's Date its Last-Modified must lie to tell versions apart. */
  static final Duration MODIFIED_SETTLED = Duration.ofSeconds(2);

  private static String versionOf(HttpResponse<?> r) {
    String etag = r.headers().firstValue("ETag").orElse(null);
    if (etag != null && !etag.isEmpty() && !etag.startsWith("W/")) return "etag " + etag;
    String modified = r.headers().firstValue("Last-Modified").orElse(null);
    String date = r.headers().firstValue("Date").orElse(null);
    if (modified == null || date == null) return null;
    try {
      java.time.format.DateTimeFormatter http = java.time.format.DateTimeFormatter.RFC_1123_DATE_TIME;
      java.time.ZonedDateTime m = java.time.ZonedDateTime.parse(modified, http);
      java.time.ZonedDateTime d = java.time.ZonedDateTime.parse(date, http);
      return m.plus(MODIFIED_SETTLED).isAfter(d) ? null : "modified " + modified;
    } catch (java.time.format.DateTimeParseException e) {
      return null;                            // not a date this can compare: no version
    }
  }

  private static HttpClient client() {
    HttpClient c = client;
    if (c == null) {
      synchronized (HttpSource.class) {
        if (client == null) {
          client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
              .followRedirects(HttpClient.Redirect.NORMAL)
              .connectTimeout(Duration.ofSeconds(30)).build();
        }
        c = client;
      }
    }
    return c;
  }

  private HttpRequest request(long first, long last) {
    return HttpRequest.newBuilder(uri).timeout(TIMEOUT).header("Range", "bytes=" + first + "-" + last)
        .GET().build();
  }

  /** The answer to req, sent up to `attempts` times while it fails in a way worth retrying. */
  private HttpResponse<byte[]> send(HttpRequest req, long first, long last, int attempts) {
    for (int attempt = 1; ; attempt++) {
      try {
        HttpResponse<byte[]> r = client().send(req, HttpResponse.BodyHandlers.ofByteArray());
        ReadStats.remote(r.body() == null ? 0 : r.body().length);
        if (attempt >= attempts || !retryable(r.statusCode())) return r;
      } catch (IOException e) {
        if (attempt >= attempts) throw failed(e, first, last);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IpcException("arrowipc: reading " + url + " was interrupted", e);
      }
      pause(attempt);
    }
  }

  private HttpResponse<byte[]> send(HttpRequest req, long first, long last) {
    return send(req, first, last, ATTEMPTS);
  }

  /** Answers that a server gives when it is busy or restarting, not when the request is wrong. */
  static boolean retryable(int status) {
    return status == 408 || status == 429 || status == 500 || status == 502 || status == 503
        || status == 504;
  }

  private void pause(int attempt) {
    try {
      Thread.sleep(RETRY_WAIT_MS << (attempt - 1));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IpcException("arrowipc: reading " + url + " was interrupted", e);
    }
  }

  private IpcException failed(Throwable e, long first, long last) {
    return new IpcException("arrowipc: reading bytes " + first + "-" + last + " of " + url
        + " failed: " + e, e);
  }

  private IpcException status(HttpResponse<byte[]> r, long first, long last) {
    String why = r.statusCode() == 200
        ? "the server ignored the Range header (HTTP 200 with the whole object); the JVM source "
          + "reads http(s) inputs with Range requests only"
        : "expected HTTP 206 (Partial Content), got " + r.statusCode();
    return new IpcException("arrowipc: reading bytes " + first + "-" + last + " of " + url + ": "
        + why);
  }

  /** {first, last, total} of a 206 answer for [first, last] (clipped at the end), else an error. */
  private long[] checked(HttpResponse<byte[]> r, long first, long last) {
    if (r.statusCode() != 206) throw status(r, first, last);
    String header = r.headers().firstValue("Content-Range").orElse("");
    Matcher m = CONTENT_RANGE.matcher(header);
    if (!m.matches() || m.group(3).equals("*")) {
      throw new IpcException("arrowipc: reading bytes " + first + "-" + last + " of " + url
          + ": expected a Content-Range header 'bytes FIRST-LAST/SIZE', found '" + header + "'");
    }
    long a = Long.parseLong(m.group(1)), b = Long.parseLong(m.group(2)), total = Long.parseLong(m.group(3));
    int got = r.body() == null ? 0 : r.body().length;
    if (a != first || b > last || b - a + 1 != got || (b < last && b != total - 1)) {
      throw new IpcException("arrowipc: reading bytes " + first + "-" + last + " of " + url
          + ": the server answered bytes " + a + "-" + b + " of " + total + " with " + got
          + " bytes of body");
    }
    return new long[] {a, b, total};
  }

  /** Bytes [offset, offset + n) of the input, in one request. */
  private byte[] fetch(long offset, int n) {
    long last = offset + n - 1;
    HttpResponse<byte[]> r = send(request(offset, last), offset, last);
    checked(r, offset, last);
    return r.body();
  }

  private boolean inWindow(long offset, long n) {
    return offset >= windowStart && offset + n <= windowStart + window.length;
  }

  @Override
  public String name() {
    return url;
  }

  @Override
  public long size() {
    return size;
  }

  @Override
  public void readFully(ByteBuffer dst, long offset) throws IOException {
    int n = dst.remaining();
    checkRange(offset, n);
    if (n == 0) return;
    if (!inWindow(offset, n) && n < SMALL_READ) {
      int len = (int) Math.min(SMALL_READ, size);
      long start = Math.min(offset, size - len);
      keep(start, fetch(start, len));
    }
    if (inWindow(offset, n)) {
      dst.put(window, (int) (offset - windowStart), n);
      return;
    }
    dst.put(fetch(offset, n));
  }

  @Override
  public void readRanges(List<ByteBuffer> dsts, long[] offsets) throws IOException {
    if (offsets.length < 2) {
      Source.super.readRanges(dsts, offsets);
      return;
    }
    for (int i = 0; i < offsets.length; i++) checkRange(offsets[i], dsts.get(i).remaining());
    // At most MAX_IN_FLIGHT requests at once: request i + MAX_IN_FLIGHT is sent when response i
    // has been taken, so many column ranges do not open as many connections to one server.
    List<CompletableFuture<HttpResponse<byte[]>>> pending = new ArrayList<>();
    int sent = 0;
    try {
      for (int i = 0; i < offsets.length; i++) {
        while (sent < offsets.length && sent < i + MAX_IN_FLIGHT) {
          int n = dsts.get(sent).remaining();
          pending.add(n == 0 ? null : client().sendAsync(request(offsets[sent], offsets[sent] + n - 1),
              HttpResponse.BodyHandlers.ofByteArray()));
          sent++;
        }
        CompletableFuture<HttpResponse<byte[]>> f = pending.set(i, null);
        if (f == null) continue;
        long last = offsets[i] + dsts.get(i).remaining() - 1;
        HttpResponse<byte[]> r;
        try {
          r = f.get();
          ReadStats.remote(r.body() == null ? 0 : r.body().length);
          if (retryable(r.statusCode())) {
            r = send(request(offsets[i], last), offsets[i], last, ATTEMPTS - 1);
          }
        } catch (ExecutionException e) {
          if (!(e.getCause() instanceof IOException)) throw failed(e.getCause(), offsets[i], last);
          r = send(request(offsets[i], last), offsets[i], last, ATTEMPTS - 1);   // the rest, here
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IpcException("arrowipc: reading " + url + " was interrupted", e);
        }
        checked(r, offsets[i], last);
        dsts.get(i).put(r.body());
      }
    } finally {
      // on a failure, the requests still out are not waited for
      for (CompletableFuture<?> f : pending) if (f != null) f.cancel(true);
    }
  }

  @Override
  public void willRead(long offset, long length) throws IOException {
    if (length <= 0 || length > MAX_HINT || inWindow(offset, length)) return;
    checkRange(offset, length);
    keep(offset, fetch(offset, (int) length));
  }

  /** Keep fetched bytes as the window (both fields set only once the fetch has succeeded). */
  private void keep(long start, byte[] bytes) {
    window = bytes;
    windowStart = start;
  }

  @Override
  public void close() {
    window = new byte[0];
  }
}
