/** `--objects` URLs: the forms docs/objects.md lists, and a clear refusal of everything else. */
import * as path from 'node:path';
import { ObjectsUrlError, describeObjectsLocation, objectsUrlProblem, parseObjectsUrl } from '../../src/objects';

describe('objects URLs', () => {
  it('reads file: directories, absolute, relative and as file:// URLs', () => {
    expect(parseObjectsUrl('file:/srv/objects')).toEqual({ kind: 'file', dir: '/srv/objects' });
    expect(parseObjectsUrl('file:shared/objects', '/srv/here')).toEqual({ kind: 'file', dir: '/srv/here/shared/objects' });
    expect(parseObjectsUrl('file:///srv/with%20space')).toEqual({ kind: 'file', dir: '/srv/with space' });
    expect(parseObjectsUrl('file://localhost/srv/o')).toEqual({ kind: 'file', dir: '/srv/o' });
    expect(describeObjectsLocation(parseObjectsUrl('file:rel'))).toBe(`file:${path.resolve('rel')}`);
  });

  it('reads s3:// buckets, prefixes and parameters, with path style for an explicit endpoint and virtual for AWS', () => {
    const loc = parseObjectsUrl('s3://svc-data/prod/objects/?endpoint=http://127.0.0.1:9000&region=eu-west-1');
    expect(loc).toMatchObject({ kind: 's3', bucket: 'svc-data', prefix: 'prod/objects', region: 'eu-west-1', style: 'path' });
    expect(loc.kind === 's3' && loc.endpoint.href).toBe('http://127.0.0.1:9000/');
    const aws = parseObjectsUrl('s3://svc-data');
    expect(aws).toMatchObject({ bucket: 'svc-data', prefix: '', region: 'us-east-1', style: 'virtual' });
    expect(aws.kind === 's3' && aws.endpoint.href).toBe('https://s3.us-east-1.amazonaws.com/');
    expect(parseObjectsUrl('s3://b.with.dots/p?style=path')).toMatchObject({ style: 'path' });
    expect(describeObjectsLocation(loc)).toBe('s3://svc-data/prod/objects?endpoint=http://127.0.0.1:9000&region=eu-west-1&style=path');
  });

  it.each([
    ['', /empty/],
    ['/srv/objects', /unknown scheme/],
    ['http://host/bucket', /unknown scheme/],
    ['file:', /no directory given/],
    ['file://otherhost/srv', /host "otherhost" is not allowed/],
    ['s3://', /not a URL|no bucket given/],
    ['s3://AKIA:secret@bucket/p', /credentials do not go in the URL/],
    ['s3://bucket/p?endpoint=http://AK:SK@h:9000', /credentials do not go in the endpoint/],
    ['s3://Bucket_Name/p', /not a valid S3 bucket name/],
    ['s3://bucket:9000/p', /has no port/],
    ['s3://bucket/a//b', /empty segment/],
    ['s3://bucket/a/../b', /\.\. segment/],
    ['s3://bucket/p?endpoint=ftp://h', /must be http:\/\/ or https:\/\//],
    ['s3://bucket/p?endpoint=h:9000', /must be http:\/\/ or https:\/\/|is not a URL/],
    ['s3://bucket/p?endpoint=http://h:9000/?x=1', /may not have a query/],
    ['s3://bucket/p?region=EU West', /not a region name/],
    ['s3://bucket/p?style=dns', /style must be path or virtual/],
    ['s3://bucket/p?acl=private', /unknown parameter "acl"/],
    ['s3://bucket/p?region=a&region=b', /given twice/],
    ['s3://b.with.dots/p', /cannot be addressed virtual-hosted over TLS/],
  ])('refuses %j, saying why', (text, why) => {
    expect(() => parseObjectsUrl(text)).toThrow(ObjectsUrlError);
    const problem = objectsUrlProblem(text);
    expect(problem).toMatch(why);
    expect(problem).toContain('forms: file:<dir> or s3://');
  });
});
