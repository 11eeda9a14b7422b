# pytest plugin for running ceph/s3-tests against svc-cache with an s3rver origin: s3rver has
# no ListObjectVersions, which the suite's bucket cleanup calls, so cleanup lists with
# ListObjectsV2 instead (the buckets are unversioned).
import s3tests.functional as functional


def _nuke_bucket(client, bucket):
    token = None
    while True:
        kwargs = {'Bucket': bucket, 'MaxKeys': 1000}
        if token:
            kwargs['ContinuationToken'] = token
        listing = client.list_objects_v2(**kwargs)
        objects = [{'Key': o['Key']} for o in listing.get('Contents', [])]
        if objects:
            client.delete_objects(Bucket=bucket, Delete={'Objects': objects, 'Quiet': True})
        token = listing.get('NextContinuationToken')
        if not listing.get('IsTruncated'):
            break
    client.delete_bucket(Bucket=bucket)


functional.nuke_bucket = _nuke_bucket
