package io.arrowipc.spark;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.spark.sql.sources.And;
import org.apache.spark.sql.sources.EqualNullSafe;
import org.apache.spark.sql.sources.EqualTo;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.sources.GreaterThan;
import org.apache.spark.sql.sources.GreaterThanOrEqual;
import org.apache.spark.sql.sources.In;
import org.apache.spark.sql.sources.IsNotNull;
import org.apache.spark.sql.sources.IsNull;
import org.apache.spark.sql.sources.LessThan;
import org.apache.spark.sql.sources.LessThanOrEqual;
import org.apache.spark.sql.sources.Or;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Skipping record batches by the statistics arrowipc writes in their custom metadata (key
 * "arrowipc:statistics", documented in arrowipc/ipc/statistics.py): a batch is skipped only when
 * its min, max and null count prove that no row satisfies every pushed filter. Statistics are
 * compared the way Spark sees the values (timestamps in microseconds, dates in days, strings by
 * their UTF-8 bytes); anything unknown (a missing key, a type without statistics, a value of
 * another kind) means "might match", so files without statistics read as before.
 */
final class StatsFilter {
  static final String KEY = "arrowipc:statistics";
  static final String FILE_KEY = "arrowipc:file_statistics";
  private static final ObjectMapper JSON = new ObjectMapper();

  private final Filter[] filters;
  private final Map<String, ArrowType> types = new HashMap<>();

  private StatsFilter(Filter[] filters, List<Field> fields) {
    this.filters = filters;
    Map<String, Integer> seen = new HashMap<>();
    for (Field f : fields) seen.merge(f.getName(), 1, Integer::sum);
    for (Field f : fields) {
      if (seen.get(f.getName()) == 1) types.put(f.getName(), f.getType());
    }
  }

  static boolean usable(Filter f) {
    if (f instanceof And) return usable(((And) f).left()) || usable(((And) f).right());
    if (f instanceof Or) return usable(((Or) f).left()) && usable(((Or) f).right());
    return f instanceof EqualTo || f instanceof EqualNullSafe || f instanceof GreaterThan
        || f instanceof GreaterThanOrEqual || f instanceof LessThan || f instanceof LessThanOrEqual
        || f instanceof In || f instanceof IsNull || f instanceof IsNotNull;
  }

  static StatsFilter of(Filter[] filters, List<Field> fields) {
    return filters == null || filters.length == 0 ? null : new StatsFilter(filters, fields);
  }

  /** False only when the batch's statistics prove that no row passes every filter. */
  boolean mightMatch(Map<String, String> metadata) {
    return metadata == null || mightMatch(parse(metadata.get(KEY)));
  }

  /** A statistics document of version 1 (a batch's or a file's), null when absent or malformed. */
  private static JsonNode parse(String raw) {
    if (raw == null) return null;
    JsonNode doc;
    try {
      doc = JSON.readTree(raw);
    } catch (java.io.IOException e) {
      return null;
    }
    if (doc == null || doc.path("version").asInt() != 1 || !doc.path("columns").isObject()) return null;
    return doc;
  }

  /**
   * The summary of a file's statistics in its footer (key "arrowipc:file_statistics"), null
   * when absent, malformed, or not describing this file's record batches (its "batch_rows" must
   * list one count per footer block, summing to "rows").
   */
  static JsonNode fileSummary(IpcFile f) {
    if (!f.fileFormat) return null;
    JsonNode doc = parse(f.footerMetadata.get(FILE_KEY));
    if (doc == null) return null;
    JsonNode counts = doc.get("batch_rows");
    if (counts == null || !counts.isArray() || counts.size() != f.batchBlocks.length) return null;
    long sum = 0;
    for (JsonNode c : counts) {
      if (!c.canConvertToLong() || !c.isIntegralNumber() || c.asLong() < 0
          || c.asLong() > Integer.MAX_VALUE) {
        return null;
      }
      sum += c.asLong();
    }
    JsonNode rows = doc.get("rows");
    return rows != null && rows.isIntegralNumber() && rows.canConvertToLong() && rows.asLong() == sum
        ? doc : null;
  }

  /** Each record batch's rows, from a summary {@link #fileSummary} accepted. */
  static long[] batchRows(JsonNode summary) {
    JsonNode counts = summary.get("batch_rows");
    long[] out = new long[counts.size()];
    for (int i = 0; i < out.length; i++) out[i] = counts.get(i).asLong();
    return out;
  }

  /** False only when the statistics document (a batch's or a file's summary) proves no row passes. */
  boolean mightMatch(JsonNode doc) {
    if (doc == null) return true;
    long rows = doc.path("rows").asLong(-1);
    for (Filter f : filters) {
      if (!eval(f, doc.get("columns"), rows)) return false;
    }
    return true;
  }

  private boolean eval(Filter f, JsonNode cols, long rows) {
    if (f instanceof And) return eval(((And) f).left(), cols, rows) && eval(((And) f).right(), cols, rows);
    if (f instanceof Or) return eval(((Or) f).left(), cols, rows) || eval(((Or) f).right(), cols, rows);
    String column;
    if (f instanceof IsNull || f instanceof IsNotNull) {
      column = f instanceof IsNull ? ((IsNull) f).attribute() : ((IsNotNull) f).attribute();
      JsonNode s = cols.get(column);
      if (s == null || !s.has("null_count") || rows < 0) return true;
      long nulls = s.get("null_count").asLong();
      return f instanceof IsNull ? nulls > 0 : nulls < rows;
    }
    Object value;
    int op;                                   // -2 <, -1 <=, 0 ==, 1 >=, 2 >
    if (f instanceof EqualTo) { column = ((EqualTo) f).attribute(); value = ((EqualTo) f).value(); op = 0; }
    else if (f instanceof EqualNullSafe) {
      column = ((EqualNullSafe) f).attribute(); value = ((EqualNullSafe) f).value(); op = 0;
      if (value == null) return eval(new IsNull(column), cols, rows);
    }
    else if (f instanceof LessThan) { column = ((LessThan) f).attribute(); value = ((LessThan) f).value(); op = -2; }
    else if (f instanceof LessThanOrEqual) { column = ((LessThanOrEqual) f).attribute(); value = ((LessThanOrEqual) f).value(); op = -1; }
    else if (f instanceof GreaterThan) { column = ((GreaterThan) f).attribute(); value = ((GreaterThan) f).value(); op = 2; }
    else if (f instanceof GreaterThanOrEqual) { column = ((GreaterThanOrEqual) f).attribute(); value = ((GreaterThanOrEqual) f).value(); op = 1; }
    else if (f instanceof In) {
      In in = (In) f;
      for (Object v : in.values()) {
        if (v == null || eval(new EqualTo(in.attribute(), v), cols, rows)) return true;
      }
      return false;
    } else {
      return true;
    }
    JsonNode s = cols.get(column);
    ArrowType t = types.get(column);
    if (s == null || t == null || value == null) return true;
    if (rows >= 0 && s.path("null_count").asLong(-1) >= rows) return false;   // all null
    Comparable<Object> v = spark(t, value);
    Comparable<Object> lo = s.has("min") ? stat(t, s.get("min")) : null;
    Comparable<Object> hi = s.has("max") ? stat(t, s.get("max")) : null;
    if (v == null) return true;
    try {
      switch (op) {
        case 0: return (lo == null || lo.compareTo(v) <= 0) && (hi == null || hi.compareTo(v) >= 0);
        case -2: return lo == null || lo.compareTo(v) < 0;
        case -1: return lo == null || lo.compareTo(v) <= 0;
        case 2: return hi == null || hi.compareTo(v) > 0;
        default: return hi == null || hi.compareTo(v) >= 0;
      }
    } catch (ClassCastException e) {
      return true;
    }
  }

  private enum Kind { NUMBER, STRING, DAYS, MICROS, OTHER }

  private static Kind kind(ArrowType t) {
    switch (t.getTypeID()) {
      case Int: case FloatingPoint: case Decimal: return Kind.NUMBER;
      case Utf8: case LargeUtf8: case Utf8View: return Kind.STRING;
      case Date: return Kind.DAYS;
      case Timestamp: return Kind.MICROS;
      default: return Kind.OTHER;
    }
  }

  @SuppressWarnings("unchecked")
  private static Comparable<Object> cmp(Object o) {
    return (Comparable<Object>) o;
  }

  /** A statistic as Spark would see the value. */
  private static Comparable<Object> stat(ArrowType t, JsonNode n) {
    switch (kind(t)) {
      case NUMBER:
        if (n.isTextual()) return cmp(new BigDecimal(n.asText()));
        if (n.isBigInteger()) return cmp(new BigDecimal(n.bigIntegerValue()));
        if (n.isIntegralNumber()) return cmp(BigDecimal.valueOf(n.asLong()));
        if (n.isNumber()) return cmp(new BigDecimal(n.asDouble()));
        return null;
      case STRING:
        return n.isTextual() ? cmp(UTF8String.fromString(n.asText())) : null;
      case DAYS: {
        if (!n.isIntegralNumber()) return null;
        long v = n.asLong();
        boolean ms = ((ArrowType.Date) t).getUnit() == org.apache.arrow.vector.types.DateUnit.MILLISECOND;
        return cmp(BigDecimal.valueOf(ms ? Math.floorDiv(v, 86_400_000L) : v));
      }
      case MICROS: {
        if (!n.isIntegralNumber()) return null;
        long v = n.asLong();
        switch (((ArrowType.Timestamp) t).getUnit()) {
          case SECOND: return cmp(BigDecimal.valueOf(v).multiply(BigDecimal.valueOf(1_000_000L)));
          case MILLISECOND: return cmp(BigDecimal.valueOf(v).multiply(BigDecimal.valueOf(1000L)));
          case MICROSECOND: return cmp(BigDecimal.valueOf(v));
          default: return cmp(BigDecimal.valueOf(Math.floorDiv(v, 1000L)));
        }
      }
      default: return null;
    }
  }

  /** A filter's value in the same terms as {@link #stat}, or null when it cannot be compared. */
  private static Comparable<Object> spark(ArrowType t, Object v) {
    switch (kind(t)) {
      case NUMBER:
        if (v instanceof BigDecimal) return cmp(v);
        if (v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte) {
          return cmp(BigDecimal.valueOf(((Number) v).longValue()));
        }
        if (v instanceof BigInteger) return cmp(new BigDecimal((BigInteger) v));
        if (v instanceof Double || v instanceof Float) {
          double d = ((Number) v).doubleValue();
          return Double.isNaN(d) || Double.isInfinite(d) ? null : cmp(new BigDecimal(d));
        }
        return null;
      case STRING:
        return v instanceof String ? cmp(UTF8String.fromString((String) v)) : null;
      case DAYS:
        if (v instanceof LocalDate) return cmp(BigDecimal.valueOf(((LocalDate) v).toEpochDay()));
        if (v instanceof java.sql.Date) return cmp(BigDecimal.valueOf(((java.sql.Date) v).toLocalDate().toEpochDay()));
        return null;
      case MICROS: {
        Instant i = null;
        if (v instanceof Instant) i = (Instant) v;
        else if (v instanceof java.sql.Timestamp) i = ((java.sql.Timestamp) v).toInstant();
        else if (v instanceof LocalDateTime) i = ((LocalDateTime) v).toInstant(ZoneOffset.UTC);
        if (i == null) return null;
        return cmp(BigDecimal.valueOf(i.getEpochSecond()).multiply(BigDecimal.valueOf(1_000_000L))
            .add(BigDecimal.valueOf(i.getNano() / 1000)));
      }
      default: return null;
    }
  }
}
