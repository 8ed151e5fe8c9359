package io.arrowipc.spark;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * Creates the columnar reader of each partition on the executors, with the driver's Hadoop
 * configuration (executors have no session to take it from) for inputs on Hadoop file systems.
 */
final class IpcReaderFactory implements PartitionReaderFactory {
  private static final long serialVersionUID = 1L;
  private final StructType schema;
  private final Filter[] filters;
  private final HadoopConf.Shipped hadoopConf;

  IpcReaderFactory(StructType schema, Filter[] filters) {
    this.schema = schema;
    this.filters = filters;
    this.hadoopConf = new HadoopConf.Shipped(HadoopConf.get());
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
    return new IpcPartitionReader((IpcPartition) partition, schema, filters, hadoopConf.value());
  }
}
