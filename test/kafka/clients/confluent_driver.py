"""Drives Debian's python3-confluent-kafka (librdkafka) against a node for the Kafka tests.

usage: /usr/bin/python3 confluent_driver.py '<json command>'
Prints one JSON line with the result; exits non-zero on an error (its message on stderr).
"""
import json
import sys

import time

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition


def produce_records(c):
    """Records given as {key, value (null: tombstone), headers: [[name, value or null]]}."""
    p = Producer({'bootstrap.servers': c['broker'], 'message.timeout.ms': 8000})
    offsets = []

    def done(err, msg):
        if err is not None:
            raise RuntimeError(str(err))
        offsets.append(msg.offset())

    for r in c['records']:
        value = None if r.get('value') is None else r['value'].encode()
        headers = [(h[0], None if h[1] is None else h[1].encode()) for h in r.get('headers', [])]
        p.produce(c['topic'], key=r.get('key'), value=value, headers=headers, partition=0, on_delivery=done)
        p.flush(8)
    return {'offsets': offsets}


def txn_producer(c, txn_id, extra=None):
    conf = {'bootstrap.servers': c['broker'], 'transactional.id': txn_id, 'transaction.timeout.ms': c.get('txnTimeoutMs', 10000),
            'message.timeout.ms': min(8000, c.get('txnTimeoutMs', 10000))}
    conf.update(extra or {})
    p = Producer(conf)
    p.init_transactions(10)
    return p


def read_all(c, topic, isolation, group=None, idle=2.0):
    """Every record of partition 0 from the start, until nothing came for `idle` seconds."""
    cons = Consumer({'bootstrap.servers': c['broker'], 'group.id': group or ('reader-%f' % time.time()), 'enable.auto.commit': False,
                     'isolation.level': isolation, 'auto.offset.reset': 'earliest'})
    cons.assign([TopicPartition(topic, 0, 0)])
    # The idle window starts once the broker has answered: on a loaded machine connecting took
    # longer than a 1 s window, and the read came back empty.
    cons.get_watermark_offsets(TopicPartition(topic, 0), timeout=15)
    out = []
    last = time.time()
    while time.time() - last < idle:
        m = cons.poll(0.2)
        if m is None:
            continue
        if m.error():
            continue
        out.append({'offset': m.offset(), 'value': None if m.value() is None else m.value().decode()})
        last = time.time()
    cons.close()
    return out


def txn_produce(c):
    """Transactions in order: each {values, commit}; then what read_committed and read_uncommitted consumers see."""
    p = txn_producer(c, c['txnId'])
    for t in c['txns']:
        p.begin_transaction()
        for v in t['values']:
            p.produce(c['topic'], value=v.encode(), partition=0)
        p.flush(8)
        if t['commit']:
            p.commit_transaction(10)
        else:
            p.abort_transaction(10)
    return {'committed': [r['value'] for r in read_all(c, c['topic'], 'read_committed')],
            'uncommitted': [r['value'] for r in read_all(c, c['topic'], 'read_uncommitted')]}


def read(c):
    return {'records': read_all(c, c['topic'], c.get('isolation', 'read_committed'), idle=c.get('idle', 2.0))}


def consume_transform_produce(c):
    """A consumer group reads `input`; each transaction upper-cases `per` records into `output` with the
    consumer's offsets; transactions listed in `abort` (0-based) are aborted, the consumer rewound."""
    cons = Consumer({'bootstrap.servers': c['broker'], 'group.id': c['group'], 'enable.auto.commit': False,
                     'isolation.level': 'read_committed', 'auto.offset.reset': 'earliest'})
    cons.subscribe([c['input']])
    p = txn_producer(c, c['txnId'])
    n = 0
    done = 0
    deadline = time.time() + 30
    while done < c['txns'] and time.time() < deadline:
        msgs = cons.consume(c['per'], 1.0)
        msgs = [m for m in msgs if not m.error()]
        if not msgs:
            continue
        p.begin_transaction()
        for m in msgs:
            p.produce(c['output'], value=m.value().upper(), partition=0)
        p.flush(8)
        p.send_offsets_to_transaction(cons.position(cons.assignment()), cons.consumer_group_metadata(), 10)
        if n in c.get('abort', []):
            p.abort_transaction(10)
            # Back to the last committed position: the aborted input is processed again.
            for tp in cons.committed(cons.assignment(), 10):
                cons.seek(TopicPartition(tp.topic, tp.partition, tp.offset if tp.offset >= 0 else 0))
        else:
            p.commit_transaction(10)
            done += 1
        n += 1
    committed = cons.committed([TopicPartition(c['input'], 0)], 10)[0].offset
    cons.close()
    return {'transactions': n, 'committedOffset': committed,
            'output': [r['value'] for r in read_all(c, c['output'], 'read_committed')],
            'outputUncommitted': [r['value'] for r in read_all(c, c['output'], 'read_uncommitted')]}


def hang(c):
    """Open a transaction, produce, print, and wait to be killed."""
    p = txn_producer(c, c['txnId'])
    p.begin_transaction()
    for v in c['values']:
        p.produce(c['topic'], value=v.encode(), partition=0)
    p.flush(8)
    print(json.dumps({'open': True}), flush=True)
    time.sleep(600)
    return {}


def fence(c):
    """Producer A opens a transaction; B initializes with the same transactional id; A's commit must fail as fenced."""
    a = txn_producer(c, c['txnId'])
    a.begin_transaction()
    a.produce(c['topic'], value=b'from-a', partition=0)
    a.flush(8)
    b = txn_producer(c, c['txnId'])
    error = None
    try:
        a.produce(c['topic'], value=b'from-a-2', partition=0)
        a.flush(5)
        a.commit_transaction(10)
    except KafkaException as e:
        error = {'fatal': e.args[0].fatal(), 'name': e.args[0].name()}
    b.begin_transaction()
    b.produce(c['topic'], value=b'from-b', partition=0)
    b.commit_transaction(10)
    return {'aError': error, 'committed': [r['value'] for r in read_all(c, c['topic'], 'read_committed')]}


def idempotent_run(c):
    """An idempotent producer (acks=all) sending values "<prefix>-<i>" to partition 0 for c['seconds'],
    one every c['everyMs'], then flushing. Prints {"started": true} first; returns the values
    acknowledged (in delivery order, with offsets) and the errors of those that were not."""
    conf = {'bootstrap.servers': c['broker'], 'enable.idempotence': True, 'acks': 'all', 'linger.ms': 5,
            'message.timeout.ms': c.get('messageTimeoutMs', 120000), 'request.timeout.ms': c.get('requestTimeoutMs', 30000)}
    if c.get('debug'):
        # librdkafka's own log (to stderr), for a test that prints it when the run goes wrong.
        conf['debug'] = c['debug']
    p = Producer(conf)
    acked = []
    failed = []

    def done(err, msg):
        if err is not None:
            failed.append({'value': msg.value().decode(), 'error': err.name()})
        else:
            acked.append({'value': msg.value().decode(), 'offset': msg.offset()})

    print(json.dumps({'started': True}), flush=True)
    end = time.time() + c['seconds']
    i = 0
    while time.time() < end:
        p.produce(c['topic'], value=('%s-%d' % (c['prefix'], i)).encode(), partition=0, on_delivery=done)
        i += 1
        p.poll(c['everyMs'] / 1000.0)
    left = p.flush(c.get('flushSeconds', 90))
    return {'sent': i, 'acked': acked, 'failed': failed, 'unflushed': left}


def txn_spread(c):
    """Transactions in order, each {values, commit}, the i-th value of each to partition i % partitions.
    Prints {"committing": k} before ending transaction k (so a test can act while it ends); returns
    each transaction's outcome ("committed", "aborted" or the error's name)."""
    p = txn_producer(c, c['txnId'], {'transaction.timeout.ms': c.get('txnTimeoutMs', 60000)})
    outcomes = []
    for k, t in enumerate(c['txns']):
        p.begin_transaction()
        for i, v in enumerate(t['values']):
            p.produce(c['topic'], value=v.encode(), partition=i % c['partitions'])
        p.flush(30)
        print(json.dumps({'committing': k}), flush=True)
        try:
            if t['commit']:
                p.commit_transaction(c.get('endSeconds', 60))
                outcomes.append('committed')
            else:
                p.abort_transaction(c.get('endSeconds', 60))
                outcomes.append('aborted')
        except KafkaException as e:
            outcomes.append(e.args[0].name())
    return {'outcomes': outcomes}


def read_spread(c):
    """Every record of every partition from the start, until nothing came for `idle` seconds."""
    cons = Consumer({'bootstrap.servers': c['broker'], 'group.id': 'reader-%f' % time.time(), 'enable.auto.commit': False,
                     'isolation.level': c.get('isolation', 'read_committed'), 'auto.offset.reset': 'earliest'})
    cons.assign([TopicPartition(c['topic'], i, 0) for i in range(c['partitions'])])
    for i in range(c['partitions']):
        cons.get_watermark_offsets(TopicPartition(c['topic'], i), timeout=15)
    out = []
    last = time.time()
    while time.time() - last < c.get('idle', 2.0):
        m = cons.poll(0.2)
        if m is None or m.error():
            continue
        out.append({'partition': m.partition(), 'offset': m.offset(), 'value': None if m.value() is None else m.value().decode()})
        last = time.time()
    cons.close()
    return {'records': out}


COMMANDS = {'idempotent_run': idempotent_run, 'produce_records': produce_records, 'txn_produce': txn_produce, 'read': read, 'ctp': consume_transform_produce, 'hang': hang, 'fence': fence, 'txn_spread': txn_spread, 'read_spread': read_spread}

if __name__ == '__main__':
    cmd = json.loads(sys.argv[1])
    print(json.dumps(COMMANDS[cmd['op']](cmd)), flush=True)
