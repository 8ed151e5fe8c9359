package io.arrowipc.spark;

import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * The answer to a pushed-down count(*), counted on the driver from footers (or message headers
 * where a file has no statistics summary): one partition, one row holding the count. Spark sums
 * the partial counts, as it does for Parquet's footers.
 */
final class CountPartition implements InputPartition {
  private static final long serialVersionUID = 1L;
  final long rows;

  CountPartition(long rows) {
    this.rows = rows;
  }

  @Override
  public String toString() {
    return "CountPartition(" + rows + " rows)";
  }

  /** Yields the one-row batch once. */
  static final class Reader implements PartitionReader<ColumnarBatch> {
    private final ColumnarBatch batch;
    private boolean done;

    Reader(CountPartition p) {
      OnHeapColumnVector count = new OnHeapColumnVector(1, DataTypes.LongType);
      count.putLong(0, p.rows);
      batch = new ColumnarBatch(new ColumnVector[] {count}, 1);
    }

    @Override
    public boolean next() {
      if (done) return false;
      done = true;
      return true;
    }

    @Override
    public ColumnarBatch get() {
      return batch;
    }

    @Override
    public void close() {
      batch.close();
    }
  }
}
