// Java peer for java_interop_test.go: Apache Kafka's own Java client
// (org.apache.kafka:kafka-clients, the one brain4it uses). One source file,
// run by Java 17's single-file launcher, no build step; from cmd/kafkabpl:
//
//   java -cp 'testdata/interop/java/lib/*' testdata/interop/java/Peer.java MODE ARGS...
//
// lib/ holds the jars that pom.xml fetches (see there). Modes, as peer.py's:
//
//   produce SERVERS TOPIC                stdin lines KEY:VALUE; prints: sent KEY PARTITION VALUE
//   consume SERVERS TOPIC N              from the start, no group; prints: got KEY PARTITION VALUE
//   group SERVERS TOPIC GROUP [PROTOCOL] a group member (client.id java-interop) of group
//                                        protocol PROTOCOL, "classic" (the default) or
//                                        "consumer" (KIP-848's, group.protocol=consumer);
//                                        prints: protocols NAME... (classic: the assignors it
//                                        offers, in order), got KEY PARTITION VALUE, and end
//                                        PARTITION for a message whose value is "end"
//   produce-typed SERVERS TOPIC KT VT    produce, the key read as type KT, the value as VT
//   consume-typed SERVERS TOPIC N KT VT  consume with the deserializers of KT and VT
//   fault-produce SERVERS TOPIC KEYS BATCH TICK-MS MAX PREFIX
//                                        for faults_test.go: records key kK, value PREFIXkK-SEQ
//                                        (record i: K = i mod KEYS, SEQ = i div KEYS), BATCH
//                                        of them every TICK-MS, acks=all, idempotent, until
//                                        stdin ends (or MAX records); prints: acked N every
//                                        1000, slow PARTITION SENT ACKED for a record that
//                                        waited 1 s or more for its ack (both in ms since
//                                        1970), failed KEY VALUE ERROR, then done ACKED
//                                        FAILED MAX-LATENCY-MS SENT (the longest a record
//                                        waited from send to its ack)
//   share SERVERS TOPIC GROUP            a KafkaShareConsumer of share group GROUP (client.id
//                                        java-share, max.poll.records 5, implicit
//                                        acknowledgement: Java's default) until stdin ends,
//                                        then commitSync; prints: got VALUE DELIVERY-COUNT
//   first-send SERVERS TOPIC             for faults_test.go: makes a KafkaProducer (acks=all,
//                                        idempotent), prints ready, and at stdin's first
//                                        line sends one record and prints: first-send MS
//                                        (from send to its ack)
//   fault-consume SERVERS TOPIC GROUP    for faults_test.go: a group member (auto-commit)
//                                        until N distinct values came, N being the number
//                                        that stdin gives once it is known, and then
//                                        nothing for 1 s; prints: assigned PARTITIONS, got
//                                        KEY PARTITION VALUE TIME (when it came, in ms since
//                                        1970)
//
// Types: String, Integer, Long, Float, Double. Each is Java's own
// (de)serializer, configured by class name as a Java application does:
// org.apache.kafka.common.serialization.IntegerSerializer and so on. Input
// text is read with the type's valueOf (Float.valueOf rounds "16777217" to
// the nearest float, 1.6777216E7). Keys and values are printed with Java's
// toString (Float.toString for floats, Double.toString for doubles). The
// producer uses the default partitioner (murmur2 of the serialized key)
// and acks=all.
//
// Every wait is bounded (max.block.ms, request and API timeouts, polls
// against a deadline, close with a timeout); a bound reached is an error:
// a message on stderr and exit status 1.

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.Future;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import java.util.Collection;

public class Peer {
    // UTF-8 whatever the locale (keys are not all ASCII), a line at a time.
    static final PrintStream OUT =
        new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);

    static final Duration CLOSE = Duration.ofSeconds(10);

    public static void main(String[] args) {
        try {
            run(args);
        } catch (Throwable e) {
            System.err.println("Peer " + String.join(" ", args) + ": " + e);
            e.printStackTrace();
            System.exit(1);
        }
        // The clients' threads end at close; exit all the same, so that no
        // lingering thread can keep the JVM up.
        System.exit(0);
    }

    static void run(String[] a) throws Exception {
        if (a.length < 3) {
            throw new IllegalArgumentException("usage: Peer MODE SERVERS TOPIC ...");
        }
        String mode = a[0], servers = a[1], topic = a[2];
        switch (mode) {
            case "produce" -> produce(servers, topic, "String", "String");
            case "consume" -> consume(servers, topic, Integer.parseInt(arg(a, 3)), "String", "String");
            case "group" -> group(servers, topic, arg(a, 3), a.length > 4 ? a[4] : "classic");
            case "produce-typed" -> produce(servers, topic, arg(a, 3), arg(a, 4));
            case "consume-typed" -> consume(servers, topic, Integer.parseInt(arg(a, 3)), arg(a, 4), arg(a, 5));
            case "fault-produce" -> faultProduce(servers, topic, Integer.parseInt(arg(a, 3)), Integer.parseInt(arg(a, 4)),
                Integer.parseInt(arg(a, 5)), Integer.parseInt(arg(a, 6)), arg(a, 7));
            case "fault-consume" -> faultConsume(servers, topic, arg(a, 3));
            case "first-send" -> firstSend(servers, topic);
            case "share" -> share(servers, topic, arg(a, 3));
            default -> throw new IllegalArgumentException("unknown mode " + mode);
        }
    }

    static String arg(String[] a, int i) {
        if (i >= a.length) {
            throw new IllegalArgumentException(a[0] + ": missing argument " + i);
        }
        return a[i];
    }

    static void out(Object... words) {
        StringBuilder b = new StringBuilder();
        for (Object w : words) {
            if (b.length() > 0) {
                b.append(' ');
            }
            b.append(w);
        }
        OUT.println(b);
    }

    // serde names Java's class for a type: suffix Serializer or Deserializer.
    static String serde(String type, String suffix) {
        return switch (type) {
            case "String", "Integer", "Long", "Float", "Double" ->
                "org.apache.kafka.common.serialization." + type + suffix;
            default -> throw new IllegalArgumentException("unknown type " + type);
        };
    }

    static Object parse(String type, String text) {
        return switch (type) {
            case "String" -> text;
            case "Integer" -> Integer.valueOf(text);
            case "Long" -> Long.valueOf(text);
            case "Float" -> Float.valueOf(text);
            case "Double" -> Double.valueOf(text);
            default -> throw new IllegalArgumentException("unknown type " + type);
        };
    }

    static Properties common(String servers, String clientId) {
        Properties p = new Properties();
        p.put("bootstrap.servers", servers);
        p.put("client.id", clientId);
        p.put("request.timeout.ms", "10000");
        return p;
    }

    static void produce(String servers, String topic, String keyType, String valueType) throws Exception {
        Properties p = common(servers, "java-interop");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, serde(keyType, "Serializer"));
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, serde(valueType, "Serializer"));
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "20000"); // metadata, buffer
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "20000"); // >= linger + request timeout
        List<Object[]> sent = new ArrayList<>();
        List<Future<RecordMetadata>> acks = new ArrayList<>();
        KafkaProducer<Object, Object> prod = new KafkaProducer<>(p);
        try {
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line; (line = in.readLine()) != null; ) {
                if (line.isEmpty()) {
                    continue;
                }
                String[] kv = line.split(":", 2);
                if (kv.length != 2) {
                    throw new IllegalArgumentException("input line " + line + ", want KEY:VALUE");
                }
                Object key = parse(keyType, kv[0]), value = parse(valueType, kv[1]);
                sent.add(new Object[] {key, value});
                acks.add(prod.send(new ProducerRecord<>(topic, key, value)));
            }
            for (int i = 0; i < sent.size(); i++) {
                RecordMetadata md = acks.get(i).get(30, TimeUnit.SECONDS);
                out("sent", sent.get(i)[0], md.partition(), sent.get(i)[1]);
            }
        } finally {
            prod.close(CLOSE);
        }
    }

    // consume reads topic from its start with no group: every partition
    // assigned, then seeked to the beginning.
    static void consume(String servers, String topic, int n, String keyType, String valueType) {
        Properties p = common(servers, "java-interop");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, serde(keyType, "Deserializer"));
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, serde(valueType, "Deserializer"));
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "20000");
        KafkaConsumer<Object, Object> c = new KafkaConsumer<>(p);
        int seen = 0;
        try {
            List<PartitionInfo> infos = c.partitionsFor(topic, Duration.ofSeconds(20));
            if (infos == null || infos.isEmpty()) {
                throw new IllegalStateException("topic " + topic + " has no partitions");
            }
            List<TopicPartition> tps = new ArrayList<>();
            for (PartitionInfo info : infos) {
                tps.add(new TopicPartition(topic, info.partition()));
            }
            c.assign(tps);
            c.seekToBeginning(tps);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (seen < n && System.nanoTime() < deadline) {
                seen += show(c.poll(Duration.ofMillis(250)));
            }
            // One more poll: a message delivered twice would show.
            show(c.poll(Duration.ofSeconds(1)));
        } finally {
            c.close(CloseOptions.timeout(CLOSE));
        }
        if (seen < n) {
            throw new IllegalStateException("consumed " + seen + " of " + n + " messages in 20 s");
        }
    }

    static int show(ConsumerRecords<Object, Object> records) {
        for (ConsumerRecord<Object, Object> r : records) {
            out("got", r.key(), r.partition(), r.value());
        }
        return records.count();
    }

    // group is a member of group id on topic under group protocol
    // protocol: "classic" with the default assignors (range, then
    // cooperative-sticky), or "consumer" (KIP-848's), where the broker
    // assigns partitions with its default assignor. It stops once an end
    // marker came and then nothing for 2 s; it commits what it consumed,
    // and close leaves the group.
    static void group(String servers, String topic, String id, String protocol) {
        if (!protocol.equals("classic") && !protocol.equals("consumer")) {
            throw new IllegalArgumentException("group protocol " + protocol + ", want classic or consumer");
        }
        Properties p = common(servers, "java-interop");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, serde("String", "Deserializer"));
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, serde("String", "Deserializer"));
        p.put(ConsumerConfig.GROUP_ID_CONFIG, id);
        p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, protocol);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "20000");
        if (protocol.equals("classic")) {
            List<String> offered = new ArrayList<>();
            for (ConsumerPartitionAssignor a : new ConsumerConfig(p).getConfiguredInstances(
                    ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, ConsumerPartitionAssignor.class)) {
                offered.add(a.name());
            }
            out("protocols", String.join(" ", offered));
        }
        KafkaConsumer<String, String> c = new KafkaConsumer<>(p);
        try {
            c.subscribe(List.of(topic));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
            boolean ended = false;
            long last = 0;
            while (System.nanoTime() < deadline) {
                ConsumerRecords<String, String> batch = c.poll(Duration.ofMillis(250));
                for (ConsumerRecord<String, String> r : batch) {
                    if ("end".equals(r.value())) {
                        out("end", r.partition());
                        ended = true;
                    } else {
                        out("got", r.key(), r.partition(), r.value());
                    }
                }
                long now = System.nanoTime();
                if (!batch.isEmpty()) {
                    last = now;
                }
                if (ended && now - last >= TimeUnit.SECONDS.toNanos(2)) {
                    c.commitSync(Duration.ofSeconds(20));
                    return;
                }
            }
            throw new IllegalStateException("no end marker within 90 s");
        } finally {
            c.close(CloseOptions.timeout(CLOSE));
        }
    }

    // share is a member of a share group beside kafkabpl's: each poll
    // accepts what the one before returned (implicit acknowledgement), and
    // the commit at the end accepts the last poll's.
    static void share(String servers, String topic, String group) {
        Properties p = common(servers, "java-share");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, serde("String", "Deserializer"));
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, serde("String", "Deserializer"));
        p.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "5"); // as kafkabpl's member: neither takes all
        p.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "20000");
        AtomicBoolean stop = new AtomicBoolean();
        untilStdinEnds(() -> stop.set(true));
        KafkaShareConsumer<String, String> c = new KafkaShareConsumer<>(p);
        try {
            c.subscribe(List.of(topic));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (!stop.get()) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("stdin did not end within 120 s");
                }
                for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
                    out("got", r.value(), r.deliveryCount().orElse((short) 0));
                }
            }
            c.commitSync(Duration.ofSeconds(20));
        } finally {
            c.close(CLOSE);
        }
    }

    // faultProduce is KafkaProducer under broker kills: Java's defaults
    // (idempotent, delivery.timeout.ms 120 s) but acks=all, and sends paced
    // as faults_test.go paces kafkabpl's, until stdin ends.
    static void faultProduce(String servers, String topic, int keys, int batch, int tickMs, int max, String prefix) throws Exception {
        Properties p = common(servers, "java-faults");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, serde("String", "Serializer"));
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, serde("String", "Serializer"));
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        AtomicLong acked = new AtomicLong(), failed = new AtomicLong(), maxLatency = new AtomicLong();
        AtomicBoolean stop = new AtomicBoolean();
        untilStdinEnds(() -> stop.set(true));
        KafkaProducer<String, String> prod = new KafkaProducer<>(p);
        int n = 0;
        try {
            long next = System.nanoTime();
            for (; n < max && !stop.get(); n++) {
                String key = "k" + (n % keys), value = prefix + key + "-" + (n / keys);
                long sent = System.nanoTime(), sentAt = System.currentTimeMillis();
                prod.send(new ProducerRecord<>(topic, key, value), (md, e) -> {
                    long latency = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sent);
                    maxLatency.accumulateAndGet(latency, Math::max);
                    if (latency >= 1000) {
                        out("slow", md == null ? -1 : md.partition(), sentAt, sentAt + latency);
                    }
                    if (e != null) {
                        failed.incrementAndGet();
                        out("failed", key, value, e.toString().replace('\n', ' '));
                    } else if (acked.incrementAndGet() % 1000 == 0) {
                        out("acked", acked.get());
                    }
                });
                if ((n + 1) % batch == 0) {
                    next += TimeUnit.MILLISECONDS.toNanos(tickMs);
                    long wait = next - System.nanoTime();
                    if (wait > 0) {
                        TimeUnit.NANOSECONDS.sleep(wait);
                    }
                }
            }
            prod.flush();
        } finally {
            prod.close(CLOSE);
        }
        out("done", acked.get(), failed.get(), maxLatency.get(), n);
    }

    // firstSend times a new producer's first send, from send() to its ack,
    // started when stdin gives a line.
    static void firstSend(String servers, String topic) throws Exception {
        Properties p = common(servers, "java-faults");
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, serde("String", "Serializer"));
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, serde("String", "Serializer"));
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        KafkaProducer<String, String> prod = new KafkaProducer<>(p);
        try {
            out("ready");
            if (new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine() == null) {
                throw new IllegalStateException("stdin ended before the go");
            }
            long start = System.nanoTime();
            prod.send(new ProducerRecord<>(topic, "k0", "k0-0")).get(60, TimeUnit.SECONDS);
            out("first-send", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
        } finally {
            prod.close(CLOSE);
        }
    }

    // untilStdinEnds runs then in a thread of its own once stdin ends
    // (or fails).
    static void untilStdinEnds(Runnable then) {
        Thread th = new Thread(() -> {
            try {
                while (System.in.read() >= 0) {
                }
            } catch (java.io.IOException e) {
            }
            then.run();
        });
        th.setDaemon(true);
        th.start();
    }

    // faultConsume is a KafkaConsumer group member under broker kills. It
    // learns how many distinct values to wait for from stdin's first line.
    static void faultConsume(String servers, String topic, String id) {
        Properties p = common(servers, "java-faults");
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, serde("String", "Deserializer"));
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, serde("String", "Deserializer"));
        p.put(ConsumerConfig.GROUP_ID_CONFIG, id);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "20000");
        AtomicLong want = new AtomicLong(-1);
        Thread reader = new Thread(() -> {
            try {
                String line = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
                if (line != null) {
                    want.set(Long.parseLong(line.trim()));
                }
            } catch (Exception e) {
                System.err.println("stdin: " + e);
            }
        });
        reader.setDaemon(true);
        reader.start();
        KafkaConsumer<String, String> c = new KafkaConsumer<>(p);
        try {
            c.subscribe(List.of(topic), new ConsumerRebalanceListener() {
                public void onPartitionsRevoked(Collection<TopicPartition> tps) {}
                public void onPartitionsAssigned(Collection<TopicPartition> tps) {
                    out("assigned", tps.size());
                }
            });
            Set<String> seen = new HashSet<>();
            // A bound, not a pace: faults_test.go ends the process sooner
            // when its scenario's deadline passes.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(900);
            long last = System.nanoTime();
            while (System.nanoTime() < deadline) {
                ConsumerRecords<String, String> batch = c.poll(Duration.ofMillis(100));
                long now = System.currentTimeMillis();
                for (ConsumerRecord<String, String> r : batch) {
                    seen.add(r.value());
                    out("got", r.key(), r.partition(), r.value(), now);
                }
                long n = want.get();
                if (!batch.isEmpty()) {
                    last = System.nanoTime();
                } else if (n >= 0 && seen.size() >= n && System.nanoTime() - last >= TimeUnit.SECONDS.toNanos(1)) {
                    c.commitSync(Duration.ofSeconds(20));
                    return;
                }
            }
            throw new IllegalStateException("consumed " + seen.size() + " of " + want.get() + " distinct values in 900 s");
        } finally {
            c.close(CloseOptions.timeout(CLOSE));
        }
    }
}
