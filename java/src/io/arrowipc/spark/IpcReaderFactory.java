package io.arrowipc.spark;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/** Creates the columnar reader of each partition on the executors. */
final class IpcReaderFactory implements PartitionReaderFactory {
  private static final long serialVersionUID = 1L;
  private final StructType schema;
  private final Filter[] filters;

  IpcReaderFactory(StructType schema, Filter[] filters) {
    this.schema = schema;
    this.filters = filters;
  }

  @Override
  public boolean supportColumnarReads(InputPartition partition) {
    return true;
  }

  @Override
  public PartitionReader<InternalRow> createReader(InputPartition partition) {
    throw new UnsupportedOperationException("arrowipc reads columnar batches only");
  }

  @Override
  public PartitionReader<ColumnarBatch> createColumnarReader(InputPartition partition) {
    if (partition instanceof CountPartition) return new CountPartition.Reader((CountPartition) partition);
    return new IpcPartitionReader((IpcPartition) partition, schema, filters);
  }
}
