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

  /**
   * The IpcException for a runtime exception the flatbuffer accessors or the schema conversion
   * throw on corrupt metadata (an offset or a vector length out of range, a missing table, an
   * enum value out of range): it names `where` (the file, and the message, batch or column where
   * known) and keeps `e` as its cause. Other exceptions (an IpcException already, or a failure
   * of the environment rather than of the input) are returned as they are.
   */
  static RuntimeException corrupt(String where, RuntimeException e) {
    if (!(e instanceof IndexOutOfBoundsException || e instanceof NullPointerException
        || e instanceof IllegalArgumentException || e instanceof IllegalStateException
        || e instanceof NegativeArraySizeException || e instanceof ClassCastException
        || e instanceof java.nio.BufferUnderflowException || e instanceof ArithmeticException)
        || e instanceof IpcException) {
      return e;
    }
    String detail = e.getMessage() == null ? e.getClass().getSimpleName()
        : e.getClass().getSimpleName() + ": " + e.getMessage();
    return new IpcException("arrowipc: " + where + " has corrupt metadata (" + detail + ")", e);
  }
}
