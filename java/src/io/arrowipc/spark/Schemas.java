package io.arrowipc.spark;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.arrow.flatbuf.KeyValue;
import org.apache.arrow.flatbuf.Type;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.DictionaryEncoding;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Flatbuffer schemas -> Arrow Java schema objects, in the message format (a dictionary-encoded
 * field keeps its value type and children, its encoding on the side). Arrow Java's own conversion
 * refuses 32- and 64-bit decimals, which the format has; they are kept here as a Decimal whose
 * bit width says so.
 */
final class Schemas {
  private Schemas() {}

  /** A decimal of 32 or 64 bits (Arrow Java's Decimal accepts only 128 and 256). */
  static final class NarrowDecimal extends ArrowType.Decimal {
    private final int width;

    NarrowDecimal(int precision, int scale, int width) {
      super(precision, scale, 128);
      this.width = width;
    }

    @Override
    public int getBitWidth() {
      return width;
    }

    @Override
    public String toString() {
      return "Decimal(" + getPrecision() + ", " + getScale() + ", " + width + ")";
    }
  }

  /**
   * The bounds the Python readers apply (IpcReadOptions' max_nesting_depth and max_fields): a
   * flatbuffer vector may point at one table many times, or at a table that contains it, so a few
   * bytes can describe an endless or exponentially large tree of fields.
   */
  static final int MAX_NESTING_DEPTH = 64;
  static final int MAX_FIELDS = 100_000;

  static Schema convert(org.apache.arrow.flatbuf.Schema fb) {
    List<Field> fields = new ArrayList<>();
    int[] count = {0};
    for (int i = 0; i < fb.fieldsLength(); i++) fields.add(field(fb.fields(i), 1, count));
    return new Schema(fields, metadata(fb.customMetadataLength(), fb::customMetadata));
  }

  private interface KeyValues {
    KeyValue get(int i);
  }

  private static Map<String, String> metadata(int n, KeyValues kvs) {
    if (n == 0) return null;
    Map<String, String> out = new HashMap<>();
    for (int i = 0; i < n; i++) {
      KeyValue kv = kvs.get(i);
      if (kv.key() != null) out.put(kv.key(), kv.value());
    }
    return out;
  }

  static Field field(org.apache.arrow.flatbuf.Field f, int depth, int[] count) {
    if (depth > MAX_NESTING_DEPTH) {
      throw new IllegalArgumentException("field '" + f.name() + "' is nested more than "
          + MAX_NESTING_DEPTH + " levels deep");
    }
    if (++count[0] > MAX_FIELDS) {
      throw new IllegalArgumentException("the schema has more than " + MAX_FIELDS + " fields, "
          + "nested ones counted");
    }
    ArrowType type;
    if (f.typeType() == Type.Decimal) {
      org.apache.arrow.flatbuf.Decimal d = (org.apache.arrow.flatbuf.Decimal)
          f.type(new org.apache.arrow.flatbuf.Decimal());
      int width = d.bitWidth();
      if (width != 32 && width != 64 && width != 128 && width != 256) {
        throw new IllegalArgumentException("field '" + f.name() + "' is a decimal of " + width
            + " bits; expected 32, 64, 128 or 256");
      }
      if (width == 32 || width == 64) {
        type = new NarrowDecimal(d.precision(), d.scale(), width);
      } else {
        type = new ArrowType.Decimal(d.precision(), d.scale(), width);
      }
    } else {
      try {
        type = ArrowType.getTypeForField(f);
      } catch (UnsupportedOperationException e) {    // a type id no Arrow type has
        throw new IllegalArgumentException("field '" + f.name() + "' has type id "
            + f.typeType() + ", which is not an Arrow type", e);
      }
    }
    DictionaryEncoding dictionary = null;
    org.apache.arrow.flatbuf.DictionaryEncoding enc = f.dictionary();
    if (enc != null) {
      org.apache.arrow.flatbuf.Int it = enc.indexType();
      ArrowType.Int index = it == null ? new ArrowType.Int(32, true)
          : new ArrowType.Int(it.bitWidth(), it.isSigned());
      dictionary = new DictionaryEncoding(enc.id(), enc.isOrdered(), index);
    }
    List<Field> children = new ArrayList<>();
    for (int i = 0; i < f.childrenLength(); i++) {
      children.add(field(f.children(i), depth + 1, count));
    }
    String name = f.name() == null ? "" : f.name();      // the name is optional in the format
    return new Field(name, new FieldType(f.nullable(), type, dictionary,
        metadata(f.customMetadataLength(), f::customMetadata)), children);
  }
}
