package io.arrowipc.spark;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.sources.DataSourceRegister;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The "arrowipc" Spark data source on the JVM (DataSource V2): Arrow IPC files (.arrow, .feather;
 * magic ARROW1 or ALKAID1) and streams (.arrows) read as columnar batches, and written with
 * Spark's commit protocol.
 *
 * <pre>
 *   spark.read.format("arrowipc").load("events/")
 *   df.write.format("arrowipc").mode("overwrite").option("compression", "zstd").save("out/")
 * </pre>
 *
 * Read options: path (file, directory or glob), schema (DDL), rowsPerPartition or
 * bytesPerPartition (default 128m). Write options: compression (none, lz4, zstd), format (file,
 * stream), rowsPerBatch (65536), statistics (true). Save modes: append and overwrite.
 * spark.readStream over a directory files arrive in (ArrowIpcMicroBatchStream): options
 * maxFilesPerTrigger, latestFirst (false).
 */
public class ArrowIpcDataSource implements TableProvider, DataSourceRegister {
  static final String SHORT_NAME = "arrowipc";
  private boolean inferred;

  @Override
  public String shortName() {
    return SHORT_NAME;
  }

  static List<String> paths(Map<String, String> options) {
    List<String> out = new ArrayList<>();
    String path = Options.get(options, "path");
    if (path != null) out.add(path);
    String many = Options.get(options, "paths");
    if (many != null && many.startsWith("[")) {   // DataFrameReader.load(a, b) passes a JSON list
      try {
        for (String p : new com.fasterxml.jackson.databind.ObjectMapper().readValue(many, String[].class)) {
          out.add(p);
        }
      } catch (java.io.IOException e) {
        throw new IpcException("arrowipc: option paths is not a JSON list of strings: " + many);
      }
    }
    return out;
  }

  @Override
  public StructType inferSchema(CaseInsensitiveStringMap options) {
    String ddl = options.get("schema");
    if (ddl != null && !ddl.isEmpty()) return StructType.fromDDL(ddl);
    inferred = true;
    List<Inputs.Listed> files = Inputs.list(paths(options));
    if (files.isEmpty()) {
      // Spark also asks for the schema of a path it is about to write to (DataFrameWriter.save
      // looks the table up first): there, no files is normal and the write brings its schema.
      if (calledByWriter()) return new StructType();
      if (calledBy(".DataStreamReader")) {
        throw new IpcException("arrowipc: " + Inputs.describe(paths(options)) + " holds no files yet "
            + "to infer the stream's schema from; give one: spark.readStream.schema(...)");
      }
      throw Inputs.noFiles(paths(options));
    }
    return Planning.commonSchema(files);
  }

  private static boolean calledBy(String classSuffix) {
    return StackWalker.getInstance().walk(frames -> frames.anyMatch(
        f -> f.getClassName().endsWith(classSuffix)));
  }

  private static boolean calledByWriter() {
    return StackWalker.getInstance().walk(frames -> frames.anyMatch(
        f -> f.getClassName().endsWith(".DataFrameWriter") || f.getClassName().endsWith(".DataFrameWriterV2")));
  }

  @Override
  public boolean supportsExternalMetadata() {
    return true;
  }

  @Override
  public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> properties) {
    return new ArrowIpcTable(schema, properties, inferred);
  }
}
