package io.arrowipc.spark;

import java.util.Locale;
import java.util.Map;

/** Option values, looked up case-insensitively, and their parsing (same rules as the Python source). */
final class Options {
  private Options() {}

  static String get(Map<String, String> options, String name) {
    String v = options.get(name);
    if (v == null) v = options.get(name.toLowerCase(Locale.ROOT));
    if (v == null) {
      for (Map.Entry<String, String> e : options.entrySet()) {
        if (e.getKey().equalsIgnoreCase(name)) return e.getValue();
      }
    }
    return v;
  }

  static long size(String text, String option) {
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("\\s*(\\d+)\\s*([a-zA-Z]*)\\s*").matcher(text);
    long unit = -1;
    if (m.matches()) {
      switch (m.group(2).toLowerCase(Locale.ROOT)) {
        case "": case "b": unit = 1; break;
        case "k": case "kb": unit = 1L << 10; break;
        case "m": case "mb": unit = 1L << 20; break;
        case "g": case "gb": unit = 1L << 30; break;
        default: unit = -1;
      }
    }
    long value = unit > 0 ? Long.parseLong(m.group(1)) * unit : 0;
    if (value <= 0) {
      throw new IpcException("arrowipc: option " + option + " expects a positive size such as "
          + "134217728, 64m or 1g; got '" + text + "'");
    }
    return value;
  }

  static int count(String text, String option) {
    long value;
    try {
      value = Long.parseLong(text.trim());
    } catch (NumberFormatException e) {
      value = 0;
    }
    if (value <= 0 || value > Integer.MAX_VALUE) {
      throw new IpcException("arrowipc: option " + option + " expects a positive integer, got '" + text + "'");
    }
    return (int) value;
  }
}
