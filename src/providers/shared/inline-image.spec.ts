import { inlineImageFault, readDataImageUrl } from './inline-image';

describe(readDataImageUrl.name, () => {
  it('reads the media type in lowercase, image/jpg as image/jpeg, and the payload without whitespace', () => {
    expect(readDataImageUrl('data:IMAGE/PNG;base64,iVBO\r\n Rw0K\tGgo=')).toEqual({
      mimeType: 'image/png',
      data: 'iVBORw0KGgo=',
    });
    expect(readDataImageUrl('data:image/jpg;base64,/9j/4AAQ')?.mimeType).toBe('image/jpeg');
  });

  it.each(['data:,', 'data:text/plain;base64,AAAA', 'data:image/png,AAAA', 'data:image/png;base64,AA*A', 'x'])(
    'reads %j as no inline image',
    (url) => expect(readDataImageUrl(url)).toBeUndefined(),
  );
});

describe(inlineImageFault.name, () => {
  const accepted = ['image/png', 'image/jpeg'];
  const image = (data: string, mimeType = 'image/png') => ({ mimeType, data });

  it.each(['AAAA', 'AAA=', 'AA==', 'iVBORw0KGgo='])('takes the base64 shape of %j', (data) =>
    expect(inlineImageFault(image(data), accepted)).toBeUndefined(),
  );

  it.each(['', 'A', 'AAAAA', 'A===', '====', 'AA=A', 'A=A=', '=AAA'])('refuses the shape of %j', (data) =>
    expect(inlineImageFault(image(data), accepted)).toEqual({
      what: 'an image whose data is not base64',
      fix: expect.stringContaining('multiple of 4'),
    }),
  );

  it('names a media type the family does not take and lists the ones it does', () => {
    expect(inlineImageFault(image('PHN2Zy8+', 'image/svg+xml'), accepted)).toEqual({
      what: 'an image of type image/svg+xml',
      fix: 'send it as image/png or image/jpeg',
    });
  });
});
