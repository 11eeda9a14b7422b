"""Drives Debian's python3-confluent-kafka (librdkafka) against a node for the Kafka tests.

usage: /usr/bin/python3 confluent_driver.py '<json command>'
Prints one JSON line with the result; exits non-zero on an error (its message on stderr).
"""
import json
import sys

from confluent_kafka import Producer


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


COMMANDS = {'produce_records': produce_records}

if __name__ == '__main__':
    cmd = json.loads(sys.argv[1])
    print(json.dumps(COMMANDS[cmd['op']](cmd)), flush=True)
