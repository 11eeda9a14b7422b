"""Drives Debian's kafka-python 2.0.x (stock) against a node for the Kafka tests.

usage: /usr/bin/python3 kafka_python_driver.py '<json command>'
Prints one JSON line with the result; exits non-zero on an error (its message on stderr).
"""
import json
import sys

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer
from kafka.admin import ConfigResource, ConfigResourceType, NewPartitions, NewTopic
from kafka.structs import TopicPartition


def security(c):
    if c.get('token') is None:
        return {}
    return {'security_protocol': 'SASL_PLAINTEXT', 'sasl_mechanism': 'PLAIN',
            'sasl_plain_username': 'svc', 'sasl_plain_password': c['token']}


def produce(c):
    p = KafkaProducer(bootstrap_servers=c['broker'], request_timeout_ms=5000, max_block_ms=8000,
                      acks=c.get('acks', 1), **security(c))
    offsets = []
    for i, v in enumerate(c['values']):
        md = p.send(c['topic'], key=('k%d' % i).encode(), value=v.encode(), headers=[('i', str(i).encode())]).get(timeout=8)
        offsets.append(md.offset)
    p.close()
    return {'offsets': offsets}


def consume(c):
    cons = KafkaConsumer(c['topic'], bootstrap_servers=c['broker'], group_id=c['group'], auto_offset_reset='earliest',
                         enable_auto_commit=False, consumer_timeout_ms=c.get('idleMs', 4000), **security(c))
    got = []
    for m in cons:
        got.append({'partition': m.partition, 'offset': m.offset, 'key': m.key.decode() if m.key else None,
                    'value': m.value.decode(), 'headers': [[k, v.decode()] for k, v in m.headers]})
        if len(got) >= c['count']:
            break
    cons.commit()
    committed = {str(tp.partition): cons.committed(tp) for tp in cons.assignment()}
    cons.close()
    return {'records': got, 'committed': committed}


def admin(c):
    a = KafkaAdminClient(bootstrap_servers=c['broker'], request_timeout_ms=8000, **security(c))
    out = {}
    t = c['topic']
    a.create_topics([NewTopic(t, 1, 1, topic_configs={'retention.ms': '3600000'})])
    out['topics'] = sorted(a.list_topics())
    res = a.describe_configs([ConfigResource(ConfigResourceType.TOPIC, t)])
    out['configs'] = {e[0]: e[1] for r in res for e in r.resources[0][4]}
    a.alter_configs([ConfigResource(ConfigResourceType.TOPIC, t, configs={'retention.ms': '7200000'})])
    res = a.describe_configs([ConfigResource(ConfigResourceType.TOPIC, t, {'retention.ms': None})])
    out['altered'] = {e[0]: e[1] for r in res for e in r.resources[0][4]}
    broker_id = str(list(a._client.cluster.brokers())[0].nodeId)
    res = a.describe_configs([ConfigResource(ConfigResourceType.BROKER, broker_id)])
    out['brokerConfigCount'] = len(res[0].resources[0][4])
    r = a.create_partitions({t: NewPartitions(3)})
    out['createPartitions'] = [[e[0], e[1]] for e in r.topic_errors]
    probe = KafkaConsumer(bootstrap_servers=c['broker'], **security(c))
    out['partitions'] = sorted(probe.partitions_for_topic(t) or [])
    probe.close()
    out['groups'] = sorted(g for g, _ in a.list_consumer_groups())
    if c.get('group'):
        out['offsets'] = {str(tp.partition): o.offset for tp, o in a.list_consumer_group_offsets(c['group']).items()}
        out['deleteGroups'] = [[g, e.errno] for g, e in a.delete_consumer_groups([c['group']])]
        out['groupsAfter'] = sorted(g for g, _ in a.list_consumer_groups())
    a.delete_topics([t])
    out['topicsAfter'] = sorted(a.list_topics())
    a.close()
    return out


COMMANDS = {'produce': produce, 'consume': consume, 'admin': admin}

if __name__ == '__main__':
    cmd = json.loads(sys.argv[1])
    print(json.dumps(COMMANDS[cmd['op']](cmd)), flush=True)
