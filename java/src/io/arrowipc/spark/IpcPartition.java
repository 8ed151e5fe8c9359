package io.arrowipc.spark;

import org.apache.spark.sql.connector.read.InputPartition;

/**
 * Record batches [start, end) of one input (end -1: a whole stream). columns[j] is the file
 * column feeding output column j, or -1 when the file lacks it (nulls).
 */
final class IpcPartition implements InputPartition {
  private static final long serialVersionUID = 1L;
  final String path;
  final boolean fileFormat;
  final int start;
  final int end;
  final int[] columns;

  IpcPartition(String path, boolean fileFormat, int start, int end, int[] columns) {
    this.path = path;
    this.fileFormat = fileFormat;
    this.start = start;
    this.end = end;
    this.columns = columns;
  }

  @Override
  public String toString() {
    return "IpcPartition(" + path + (fileFormat ? ", batches [" + start + ", " + end + ")" : ", stream") + ")";
  }
}
