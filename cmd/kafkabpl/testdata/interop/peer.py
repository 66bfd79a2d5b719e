"""kafka-python peer for interop_test.go; run with Debian's /usr/bin/python3.

  peer.py produce SERVERS TOPIC        stdin lines KEY:VALUE; prints: sent KEY PARTITION VALUE
  peer.py consume SERVERS TOPIC N      from the start, no group; prints: got KEY PARTITION VALUE
  peer.py group SERVERS TOPIC GROUP    a group member; prints: got KEY PARTITION VALUE,
                                       and: end PARTITION for a message whose value is "end"

Every wait is bounded; a bound reached is an error (exit 1).
"""

import faulthandler
import signal
import sys
import time

from kafka import KafkaConsumer, KafkaProducer

# The tests send SIGQUIT to a peer that hangs: print where it is.
faulthandler.register(signal.SIGQUIT, all_threads=True)


# Text is UTF-8 whatever the locale (python runs with -I, which ignores
# PYTHONIOENCODING).
sys.stdout.reconfigure(encoding="utf-8")


def out(*words):
    print(*words, flush=True)


def produce(servers, topic):
    # Keys and values as bytes; with a key, the default partitioner is
    # murmur2, as Java's client.
    p = KafkaProducer(bootstrap_servers=servers, client_id="kafka-python-interop",
                      key_serializer=str.encode, value_serializer=str.encode,
                      max_block_ms=20000)
    sends = []
    for line in sys.stdin.buffer.read().decode("utf-8").splitlines():
        key, value = line.split(":", 1)
        sends.append((key, value, p.send(topic, key=key, value=value)))
    for key, value, future in sends:
        out("sent", key, future.get(timeout=20).partition, value)
    p.close(timeout=10)


def consume(servers, topic, n):
    c = KafkaConsumer(topic, bootstrap_servers=servers, client_id="kafka-python-interop",
                      group_id=None, auto_offset_reset="earliest",
                      consumer_timeout_ms=20000)
    seen = 0
    for r in c:  # ends after 20 s without a message
        out("got", r.key.decode(), r.partition, r.value.decode())
        seen += 1
        if seen == n:
            break
    # One more poll: a message delivered twice would show.
    for records in c.poll(timeout_ms=1000).values():
        for r in records:
            out("got", r.key.decode(), r.partition, r.value.decode())
    c.close()
    if seen < n:
        sys.exit("consumed %d of %d messages" % (seen, n))


def group(servers, topic, group_id):
    # Default assignors: range, then roundrobin. Stops once an end marker
    # came and then nothing for 2 s; close commits what was consumed and
    # leaves the group.
    c = KafkaConsumer(topic, bootstrap_servers=servers, client_id="kafka-python-interop",
                      group_id=group_id, auto_offset_reset="earliest")
    deadline = time.monotonic() + 90
    ended, last = False, 0.0
    while time.monotonic() < deadline:
        batch = c.poll(timeout_ms=250)
        for records in batch.values():
            for r in records:
                if r.value == b"end":
                    out("end", r.partition)
                    ended = True
                else:
                    out("got", r.key.decode(), r.partition, r.value.decode())
        now = time.monotonic()
        if batch:
            last = now
        if ended and now - last >= 2:
            c.close()
            return
    c.close()
    sys.exit("no end marker within 90 s")


if __name__ == "__main__":
    mode, servers, topic = sys.argv[1], sys.argv[2].split(","), sys.argv[3]
    if mode == "produce":
        produce(servers, topic)
    elif mode == "consume":
        consume(servers, topic, int(sys.argv[4]))
    elif mode == "group":
        group(servers, topic, sys.argv[4])
    else:
        sys.exit("unknown mode " + mode)
