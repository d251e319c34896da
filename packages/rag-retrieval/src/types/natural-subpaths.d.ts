// natural's package root loads every module it has (about 1.3 s); we import only the two we use.
declare module 'natural/lib/natural/stemmers/porter_stemmer.js' {
  const PorterStemmer: { stem(token: string): string };
  export default PorterStemmer;
}
declare module 'natural/lib/natural/util/stopwords.js' {
  export const words: string[];
}
