package io.arrowipc.spark;

import org.apache.hadoop.conf.Configuration;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.util.SerializableConfiguration;

/**
 * The Hadoop configuration Hadoop file systems are opened with: on the driver, the active
 * session's (spark.hadoop.* settings, credentials of s3a and the like); tasks get the driver's
 * copy (Shipped, through their reader factory or file reader), since executors have no session.
 */
final class HadoopConf {
  private HadoopConf() {}

  static Configuration get() {
    try {
      scala.Option<SparkSession> s = SparkSession.getActiveSession();
      if (s.isEmpty()) s = SparkSession.getDefaultSession();
      if (s.isDefined()) return new Configuration(s.get().sparkContext().hadoopConfiguration());
    } catch (RuntimeException | LinkageError e) {
      // no session here (an executor, a unit test): Hadoop's defaults
    }
    return new Configuration();
  }

  /**
   * A Hadoop configuration shipped to tasks as a broadcast, as Spark's Parquet and ORC readers
   * ship theirs: each executor deserializes it once, where a configuration held by the reader
   * (its thousand-odd entries) would be deserialized again with every task's closure. Without a
   * session to broadcast through, it travels with the reader.
   *
   * <p>Unlike theirs, the broadcast is made once per distinct configuration and SparkContext, not
   * per query: Spark builds a new Configuration for every scan, and serializing and compressing
   * it (about 110 KB) is a fixed cost of each query otherwise. Comparing the entries costs a
   * pass over them.
   */
  static final class Shipped implements java.io.Serializable {
    private static final long serialVersionUID = 1L;
    private static final int KEPT = 4;     // broadcasts kept for reuse (distinct configurations)
    private static final java.util.LinkedHashMap<java.util.Map<String, String>, Kept> BROADCASTS =
        new java.util.LinkedHashMap<>(8, 0.75f, true);     // by the configuration's entries

    private static final class Kept {
      final org.apache.spark.SparkContext context;
      final org.apache.spark.broadcast.Broadcast<SerializableConfiguration> broadcast;

      Kept(org.apache.spark.SparkContext context,
           org.apache.spark.broadcast.Broadcast<SerializableConfiguration> broadcast) {
        this.context = context;
        this.broadcast = broadcast;
      }
    }
    private final org.apache.spark.broadcast.Broadcast<SerializableConfiguration> broadcast;
    private final SerializableConfiguration direct;

    Shipped(Configuration conf) {
      org.apache.spark.broadcast.Broadcast<SerializableConfiguration> b = null;
      scala.Option<SparkSession> s = SparkSession.getActiveSession();
      if (s.isEmpty()) s = SparkSession.getDefaultSession();
      if (s.isDefined()) b = broadcastOf(s.get().sparkContext(), conf);
      this.broadcast = b;
      this.direct = b == null ? new SerializableConfiguration(conf) : null;
    }

    private static org.apache.spark.broadcast.Broadcast<SerializableConfiguration> broadcastOf(
        org.apache.spark.SparkContext sc, Configuration conf) {
      java.util.Map<String, String> entries = new java.util.HashMap<>();
      for (java.util.Map.Entry<String, String> e : conf) entries.put(e.getKey(), e.getValue());
      synchronized (BROADCASTS) {
        Kept kept = BROADCASTS.get(entries);
        // another context's broadcast (a session stopped and a new one started) is of no use
        if (kept != null && kept.context == sc && !sc.isStopped()) return kept.broadcast;
        org.apache.spark.broadcast.Broadcast<SerializableConfiguration> b = sc.broadcast(new SerializableConfiguration(conf),
            scala.reflect.ClassTag$.MODULE$.apply(SerializableConfiguration.class));
        BROADCASTS.put(entries, new Kept(sc, b));
        // dropped ones are left to Spark's cleaner (a running query may still use one)
        java.util.Iterator<java.util.Map<String, String>> oldest = BROADCASTS.keySet().iterator();
        while (BROADCASTS.size() > KEPT) {
          oldest.next();
          oldest.remove();
        }
        return b;
      }
    }

    Configuration value() {
      return broadcast != null ? broadcast.value().value() : direct.value();
    }
  }
}
