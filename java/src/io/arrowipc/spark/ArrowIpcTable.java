package io.arrowipc.spark;

import java.util.EnumSet;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/** The files under one load or save path. */
final class ArrowIpcTable implements SupportsRead, SupportsWrite {
  private final StructType schema;
  private final Map<String, String> options;
  private final boolean inferred;
  private final boolean fileFormat;

  /**
   * `fileFormat`: partitioned (a write with partitionBy, a directory of col=value directories,
   * option basePath): the table then offers no V2 batch read or write, and Spark uses the
   * source's FileFormat side for it (see PartitionedFiles).
   */
  ArrowIpcTable(StructType schema, Map<String, String> options, boolean inferred, boolean fileFormat) {
    this.schema = schema;
    this.options = new HashMap<>(options);
    this.inferred = inferred;
    this.fileFormat = fileFormat;
  }

  @Override
  public String name() {
    return "arrowipc " + ArrowIpcDataSource.paths(options);
  }

  @Override
  @SuppressWarnings("deprecation")   // what TableProvider tables still report their schema by
  public StructType schema() {
    return schema;
  }

  @Override
  public Set<TableCapability> capabilities() {
    // ACCEPT_ANY_SCHEMA: a write brings its own schema (the path may hold nothing yet);
    // MICRO_BATCH_READ: spark.readStream over a directory files arrive in
    // A partitioned table: V1_BATCH_WRITE and no BATCH_READ make Spark write and read it through
    // the source's FileFormat side instead (DataFrameWriter and DataFrameReader fall back)
    if (fileFormat) return EnumSet.of(TableCapability.V1_BATCH_WRITE);
    return EnumSet.of(TableCapability.BATCH_READ, TableCapability.MICRO_BATCH_READ,
        TableCapability.BATCH_WRITE,
        TableCapability.TRUNCATE, TableCapability.ACCEPT_ANY_SCHEMA);
  }

  @Override
  public ScanBuilder newScanBuilder(CaseInsensitiveStringMap scanOptions) {
    Map<String, String> all = new HashMap<>(options);
    all.putAll(scanOptions);
    return new ArrowIpcScanBuilder(schema, all, inferred);
  }

  @Override
  public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
    Map<String, String> all = new HashMap<>(options);
    all.putAll(info.options());
    return new ArrowIpcWriteBuilder(info.schema(), all);
  }
}
