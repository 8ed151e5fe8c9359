package io.arrowipc.spark;

/**
 * Malformed or unreadable input, or data that does not fit the requested schema. The message says
 * what was expected, what was found and where (file, record batch, column).
 */
public class IpcException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public IpcException(String message) {
    super(message);
  }

  public IpcException(String message, Throwable cause) {
    super(message, cause);
  }
}
