import java.io.BufferedWriter;
import java.io.OutputStreamWriter;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Reads every record of one topic as a read_committed subscriber sees it, with Kafka's own consumer,
 * and prints one JSON line per record: partition, offset, and key, value and headers in base64.
 * It reads each partition until its position passes the partition's end as it stood at the start
 * (its high watermark): a transaction open then is waited for, so what it prints is final for that
 * stretch. Arguments: a properties file (bootstrap.servers and any security settings), the topic,
 * and how long to wait in all, in milliseconds. Exits 2 naming the partitions it could not finish.
 */
public final class ReadCommitted {
  public static void main(String[] args) throws Exception {
    if (args.length != 3) {
      System.err.println("usage: ReadCommitted <client.properties> <topic> <timeout-ms>");
      System.exit(64);
    }
    Properties props = new Properties();
    try (var in = java.nio.file.Files.newInputStream(java.nio.file.Path.of(args[0]))) {
      props.load(in);
    }
    String topic = args[1];
    long deadline = System.currentTimeMillis() + Long.parseLong(args[2]);
    props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "5000");

    Map<TopicPartition, Long> ends;
    List<TopicPartition> partitions = new ArrayList<>();
    Properties uncommitted = (Properties) props.clone();
    uncommitted.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_uncommitted");
    try (KafkaConsumer<byte[], byte[]> probe = new KafkaConsumer<>(uncommitted)) {
      for (PartitionInfo info : probe.partitionsFor(topic, Duration.ofMillis(30_000))) {
        partitions.add(new TopicPartition(topic, info.partition()));
      }
      ends = new HashMap<>(probe.endOffsets(partitions, Duration.ofMillis(30_000)));
    }

    props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    Base64.Encoder b64 = Base64.getEncoder();
    var out = new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8), 1 << 16);
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props)) {
      consumer.assign(partitions);
      consumer.seekToBeginning(partitions);
      List<TopicPartition> open = new ArrayList<>(partitions);
      while (true) {
        open.removeIf(tp -> consumer.position(tp) >= ends.get(tp));
        if (open.isEmpty()) break;
        if (System.currentTimeMillis() > deadline) {
          StringBuilder where = new StringBuilder();
          for (TopicPartition tp : open) {
            where.append(' ').append(tp.partition()).append('@').append(consumer.position(tp)).append('/').append(ends.get(tp));
          }
          out.flush();
          System.err.println("read_committed: partitions not read to their end in time:" + where);
          System.exit(2);
        }
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
          StringBuilder line = new StringBuilder(256);
          line.append("{\"partition\":").append(r.partition()).append(",\"offset\":\"").append(r.offset()).append('"');
          line.append(",\"key\":").append(r.key() == null ? "null" : '"' + b64.encodeToString(r.key()) + '"');
          line.append(",\"value\":").append(r.value() == null ? "null" : '"' + b64.encodeToString(r.value()) + '"');
          line.append(",\"headers\":[");
          boolean first = true;
          for (Header h : r.headers()) {
            if (!first) line.append(',');
            first = false;
            line.append("[\"").append(b64.encodeToString(h.key().getBytes(StandardCharsets.UTF_8))).append("\",");
            line.append(h.value() == null ? "null" : '"' + b64.encodeToString(h.value()) + '"').append(']');
          }
          line.append("]}\n");
          out.write(line.toString());
        }
      }
    }
    out.flush();
  }
}
