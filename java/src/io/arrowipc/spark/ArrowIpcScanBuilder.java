package io.arrowipc.spark;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.read.SupportsPushDownFilters;
import org.apache.spark.sql.connector.read.SupportsPushDownRequiredColumns;
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.StructType;

/**
 * Planning a read: the columns a query needs (only their buffers are read), the filters whose
 * statistics can skip record batches (Spark still applies every filter to the rows), and splits
 * into ranges of record batches from the files' footers.
 */
final class ArrowIpcScanBuilder implements ScanBuilder, SupportsPushDownRequiredColumns,
    SupportsPushDownFilters, Scan, Batch {
  private final StructType tableSchema;
  private final Map<String, String> options;
  private final boolean inferred;
  private StructType required;
  private Filter[] pushed = new Filter[0];

  ArrowIpcScanBuilder(StructType schema, Map<String, String> options, boolean inferred) {
    this.tableSchema = schema;
    this.options = options;
    this.inferred = inferred;
    this.required = schema;
  }

  @Override
  public void pruneColumns(StructType requiredSchema) {
    this.required = requiredSchema;
  }

  @Override
  public Filter[] pushFilters(Filter[] filters) {
    List<Filter> usable = new ArrayList<>();
    for (Filter f : filters) {
      if (StatsFilter.usable(f)) usable.add(f);
    }
    pushed = usable.toArray(new Filter[0]);
    return filters;               // statistics skip batches; rows are still filtered by Spark
  }

  @Override
  public Filter[] pushedFilters() {
    return pushed;
  }

  @Override
  public Scan build() {
    return this;
  }

  @Override
  public StructType readSchema() {
    return required;
  }

  @Override
  public String description() {
    return "arrowipc " + ArrowIpcDataSource.paths(options) + " columns " + required.simpleString()
        + (pushed.length > 0 ? " skipping batches by " + java.util.Arrays.toString(pushed) : "");
  }

  @Override
  public Batch toBatch() {
    return this;
  }

  @Override
  public MicroBatchStream toMicroBatchStream(String checkpointLocation) {
    return new ArrowIpcMicroBatchStream(required, options, inferred, checkpointLocation);
  }

  @Override
  public InputPartition[] planInputPartitions() {
    List<String> paths = ArrowIpcDataSource.paths(options);
    List<String> files = Inputs.find(paths);
    if (files.isEmpty()) throw Inputs.noFiles(paths);
    String rowsOpt = Options.get(options, "rowsPerPartition");
    String bytesOpt = Options.get(options, "bytesPerPartition");
    if (rowsOpt != null && bytesOpt != null) {
      throw new IpcException("arrowipc: give rowsPerPartition or bytesPerPartition, not both");
    }
    long rowsTarget = rowsOpt == null ? -1 : Options.count(rowsOpt, "rowsPerPartition");
    long bytesTarget = bytesOpt == null ? Planning.DEFAULT_BYTES_PER_PARTITION
        : Options.size(bytesOpt, "bytesPerPartition");
    if (inferred) Planning.commonSchema(files);
    List<InputPartition> parts = new ArrayList<>();
    for (String path : files) {
      try (IpcFile f = IpcFile.open(path)) {
        int[] columns = Planning.matchColumns(f, required);
        if (!f.fileFormat) {
          parts.add(new IpcPartition(path, false, 0, -1, columns));
          continue;
        }
        long[] amounts;
        if (rowsTarget > 0) {
          amounts = Planning.batchRows(f);
        } else {
          amounts = new long[f.batchBlocks.length];
          for (int i = 0; i < amounts.length; i++) {
            amounts[i] = f.batchBlocks[i][1] + f.batchBlocks[i][2];
          }
        }
        if (amounts.length == 0) continue;         // a schema-only file: no rows
        for (int[] r : Planning.group(amounts, rowsTarget > 0 ? rowsTarget : bytesTarget)) {
          parts.add(new IpcPartition(path, true, r[0], r[1], columns));
        }
      }
    }
    return parts.toArray(new InputPartition[0]);
  }

  @Override
  public PartitionReaderFactory createReaderFactory() {
    return new IpcReaderFactory(required, pushed);
  }
}
