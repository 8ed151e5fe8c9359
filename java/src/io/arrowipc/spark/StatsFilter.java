package io.arrowipc.spark;

import java.util.List;
import java.util.Map;

import org.apache.arrow.vector.types.pojo.Field;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.StructType;

/** Skipping record batches by the statistics in their custom metadata. */
final class StatsFilter {
  static boolean usable(Filter f) {
    return false;
  }

  static StatsFilter of(Filter[] filters, List<Field> fields, StructType schema) {
    return null;
  }

  boolean mightMatch(Map<String, String> metadata) {
    return true;
  }
}
