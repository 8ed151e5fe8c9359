package io.arrowipc.spark;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import org.apache.spark.sql.connector.expressions.aggregate.AggregateFunc;
import org.apache.spark.sql.connector.expressions.aggregate.Aggregation;
import org.apache.spark.sql.connector.expressions.aggregate.CountStar;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.read.SupportsPushDownAggregates;
import org.apache.spark.sql.connector.read.SupportsPushDownFilters;
import org.apache.spark.sql.connector.read.SupportsPushDownRequiredColumns;
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * Planning a read: the columns a query needs (only their buffers are read), the filters whose
 * statistics can skip files (the footer's summary) and record batches (Spark still applies every
 * filter to the rows), splits into ranges of record batches from the files' footers, and
 * count(*) answered on the driver from footers without a task opening a batch.
 */
final class ArrowIpcScanBuilder implements ScanBuilder, SupportsPushDownRequiredColumns,
    SupportsPushDownFilters, SupportsPushDownAggregates, Scan, Batch {
  private final StructType tableSchema;
  private final Map<String, String> options;
  private final boolean inferred;
  private StructType required;
  private Filter[] pushed = new Filter[0];
  private boolean countPushed;
  private InputPartition[] planned;           // Spark may ask more than once: footers are read once

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

  /**
   * count(*) without grouping: planning counts the rows (footer summaries, else message headers)
   * and one task returns that count. Spark pushes aggregates only when every filter was pushed
   * completely, which ours never are (rows are always filtered by Spark): a filtered count reads.
   */
  @Override
  public boolean pushAggregation(Aggregation aggregation) {
    String enabled = Options.get(options, "aggregatePushdown");
    if (enabled != null && !enabled.equalsIgnoreCase("true")) {
      if (!enabled.equalsIgnoreCase("false")) {
        throw new IpcException("arrowipc: option aggregatePushdown must be true or false; got '"
            + enabled + "'");
      }
      return false;              // count(*) then reads the batches' message headers in tasks
    }
    if (aggregation.groupByExpressions().length != 0) return false;
    AggregateFunc[] funcs = aggregation.aggregateExpressions();
    if (funcs.length != 1 || !(funcs[0] instanceof CountStar)) return false;
    countPushed = true;
    return true;
  }

  @Override
  public Scan build() {
    return this;
  }

  @Override
  public StructType readSchema() {
    return countPushed ? new StructType().add("count(*)", DataTypes.LongType, false) : required;
  }

  @Override
  public String description() {
    if (countPushed) return "arrowipc " + ArrowIpcDataSource.paths(options) + " count(*) from footers";
    return "arrowipc " + ArrowIpcDataSource.paths(options) + " columns " + required.simpleString()
        + (pushed.length > 0 ? " skipping files and batches by " + java.util.Arrays.toString(pushed) : "");
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
    if (planned == null) planned = plan();
    return planned;
  }

  /**
   * Each input opened once, through FooterCache: its footer (read at schema inference when that
   * ran, and kept) serves the schema check, the statistics summary and the batch ranges.
   */
  private InputPartition[] plan() {
    List<String> paths = ArrowIpcDataSource.paths(options);
    List<Inputs.Listed> files = Inputs.list(paths);
    if (files.isEmpty()) throw Inputs.noFiles(paths);
    String rowsOpt = Options.get(options, "rowsPerPartition");
    String bytesOpt = Options.get(options, "bytesPerPartition");
    if (rowsOpt != null && bytesOpt != null) {
      throw new IpcException("arrowipc: give rowsPerPartition or bytesPerPartition, not both");
    }
    long rowsTarget = rowsOpt == null ? -1 : Options.count(rowsOpt, "rowsPerPartition");
    long bytesTarget = bytesOpt == null ? Planning.DEFAULT_BYTES_PER_PARTITION
        : Options.size(bytesOpt, "bytesPerPartition");
    // An inferred schema is checked again: the inputs may have changed since it was inferred.
    Planning.CommonSchema common = inferred ? new Planning.CommonSchema() : null;
    // With a user schema every file is checked against all of it (a missing NOT NULL column, a
    // type that cannot be read as the declared one), whichever columns the query reads, count(*)
    // included: as the Python source does, and so that count(*) fails where a scan would.
    StructType declared = inferred ? null : tableSchema;
    long count = 0;
    List<InputPartition> parts = new ArrayList<>();
    for (Inputs.Listed input : files) {
      try (IpcFile f = FooterCache.open(input)) {
        String path = f.path;
        if (common != null) common.check(f);
        if (declared != null) Planning.matchColumns(f, declared);
        if (countPushed) {
          count += Planning.rows(f);
          continue;
        }
        int[] columns = Planning.matchColumns(f, required);
        if (!f.fileFormat) {
          parts.add(new IpcPartition(path, false, 0, -1, columns));
          continue;
        }
        JsonNode summary = StatsFilter.fileSummary(f);
        StatsFilter stats = StatsFilter.of(pushed, f.schema.getFields());
        if (summary != null && stats != null && !stats.mightMatch(summary)) {
          ReadStats.fileSkipped();                  // no row of this file passes the filters
          continue;
        }
        long[] amounts;
        if (rowsTarget > 0) {
          amounts = summary != null ? StatsFilter.batchRows(summary) : Planning.batchRows(f);
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
    if (countPushed) return new InputPartition[] {new CountPartition(count)};
    return parts.toArray(new InputPartition[0]);
  }

  @Override
  public PartitionReaderFactory createReaderFactory() {
    return new IpcReaderFactory(required, pushed);
  }
}
