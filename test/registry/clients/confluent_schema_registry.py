"""confluent-kafka-python's SchemaRegistryClient (Debian's python3-confluent-kafka) against the
schema registry listener: one run of every step, its observations printed as one JSON line.

argv[1]: {"url": ..., "token": ...}
"""
import json
import sys

from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.error import SchemaRegistryError
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

cmd = json.loads(sys.argv[1])
client = SchemaRegistryClient({"url": cmd["url"], "basic.auth.user.info": "svc:" + cmd["token"]})
out = {}

v1 = {"type": "record", "name": "Reading", "namespace": "py", "fields": [{"name": "value", "type": "double"}]}
v2 = dict(v1, fields=v1["fields"] + [{"name": "unit", "type": "string", "default": "C"}])
bad = dict(v1, fields=[{"name": "value", "type": "string"}])

out["id1"] = client.register_schema("readings-value", Schema(json.dumps(v1), "AVRO"))
out["id2"] = client.register_schema("readings-value", Schema(json.dumps(v2), "AVRO"))
out["compatible_bad"] = client.test_compatibility("readings-value", Schema(json.dumps(bad), "AVRO"))
try:
    client.register_schema("readings-value", Schema(json.dumps(bad), "AVRO"))
    out["bad"] = None
except SchemaRegistryError as e:
    out["bad"] = {"status": e.http_status_code, "code": e.error_code}
latest = client.get_latest_version("readings-value")
out["latest"] = {"id": latest.schema_id, "version": latest.version, "subject": latest.subject}
out["by_id"] = json.loads(client.get_schema(out["id1"]).schema_str)
found = client.lookup_schema("readings-value", Schema(json.dumps(v1), "AVRO"))
out["lookup"] = {"id": found.schema_id, "version": found.version}
out["versions"] = client.get_versions("readings-value")
try:
    client.get_schema(987654)
    out["missing"] = None
except SchemaRegistryError as e:
    out["missing"] = {"status": e.http_status_code, "code": e.error_code}

# JSON Schema values with the Confluent wire format.
order = {"$schema": "http://json-schema.org/draft-07/schema#", "title": "Order", "type": "object",
         "properties": {"id": {"type": "integer"}, "item": {"type": "string"}}, "required": ["id"]}
ser = JSONSerializer(json.dumps(order), client, conf={"auto.register.schemas": True})
ctx = SerializationContext("pyorders", MessageField.VALUE)
data = ser({"id": 3, "item": "pen"}, ctx)
out["json_magic"] = data[0]
out["json_id"] = int.from_bytes(data[1:5], "big")
out["json_registered"] = client.get_latest_version("pyorders-value").schema_id
out["json_value"] = JSONDeserializer(json.dumps(order))(data, ctx)
out["deleted"] = client.delete_subject("pyorders-value")
print(json.dumps(out))
