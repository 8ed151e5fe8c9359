package io.arrowipc.spark;

import java.util.Locale;
import java.util.Map;

import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.TableIdentifier;
import org.apache.spark.sql.catalyst.analysis.NoSuchNamespaceException;
import org.apache.spark.sql.catalyst.analysis.TableAlreadyExistsException;
import org.apache.spark.sql.catalyst.catalog.CatalogTable;
import org.apache.spark.sql.connector.catalog.Column;
import org.apache.spark.sql.connector.catalog.DelegatingCatalogExtension;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCatalog;
import org.apache.spark.sql.connector.expressions.Transform;

/**
 * The session catalog for arrowipc catalog tables (CREATE TABLE ... USING arrowipc):
 * spark.sql.catalog.spark_catalog=io.arrowipc.spark.ArrowIpcSessionCatalog.
 *
 * <p>Spark 4's built-in session catalog hands a table whose provider is a DataSource V2
 * TableProvider, as "arrowipc" is, to the provider's V2 table; Spark's file source machinery
 * (partition directories, pruning, INSERT INTO and INSERT OVERWRITE of partitions) serves only
 * tables it loads as V1 tables. With any session catalog extension configured, Spark's session
 * catalog loads data source tables as V1 tables, as Spark 3 did for every table: this one
 * delegates, and registers the partitions a new partitioned table's location already holds (as
 * Spark's CREATE TABLE does for its own file sources, but not for V2 providers).
 */
public class ArrowIpcSessionCatalog extends DelegatingCatalogExtension {
  @Override
  public Table createTable(Identifier ident, Column[] columns, Transform[] partitions,
                           Map<String, String> properties)
      throws TableAlreadyExistsException, NoSuchNamespaceException {
    Table created = super.createTable(ident, columns, partitions, properties);
    String provider = properties.get(TableCatalog.PROP_PROVIDER);
    if (provider != null && (provider.toLowerCase(Locale.ROOT).equals(ArrowIpcDataSource.SHORT_NAME)
        || provider.equals(ArrowIpcDataSource.class.getName()))) {
      recoverPartitions(ident);
    }
    return created;
  }

  private static void recoverPartitions(Identifier ident) {
    SparkSession session = SparkSession.active();
    String[] ns = ident.namespace();
    TableIdentifier id = ns.length == 0 ? TableIdentifier.apply(ident.name())
        : TableIdentifier.apply(ident.name(), scala.Option.apply(ns[ns.length - 1]));
    CatalogTable table;
    try {
      table = session.sessionState().catalog().getTableMetadata(id);
    } catch (Exception e) {
      return;                          // not a session catalog table: nothing of ours to do
    }
    if (table.partitionColumnNames().isEmpty() || !table.tracksPartitionsInCatalog()) return;
    try {
      org.apache.hadoop.fs.Path location = new org.apache.hadoop.fs.Path(table.location());
      if (!location.getFileSystem(session.sessionState().newHadoopConf()).exists(location)) return;
    } catch (java.io.IOException e) {
      throw new IpcException("arrowipc: cannot look at the location of " + id + ": " + e, e);
    }
    session.sql("ALTER TABLE " + id.quotedString() + " RECOVER PARTITIONS");
  }
}
