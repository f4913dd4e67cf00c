//! Answering a query ([`SearchIndex::search`]): the reader's filters, typo tolerance's
//! neighbours, totals and facets over every match, the ranked page (segments largest first),
//! snippets and cursors.

use super::*;

impl TantivyIndex {
    /// Answers `q` ([`SearchIndex::search`]).
    pub(crate) fn search_now(&self, q: &IndexQuery) -> Result<Hits> {
        let (searcher, offset) = self.searcher_for(q.cursor.as_deref())?;
        let lang = analysis::query_language(&q.text);
        let parsed = query::parse(&q.text);
        // The reader's filter, read once for the query, its typos and its facets.
        let access = self.access(q);
        let (variants, corrections) = match q.typos {
            true => self.variants(&searcher, &parsed, q, access.as_ref())?,
            false => Default::default(),
        };
        let built = query::build(&parsed, q.match_all, lang, self.fields.text, &variants);
        let filters = self.filters(q, access.as_ref());
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = filters
            .iter()
            .map(|(occur, f)| (*occur, f.box_clone()))
            .collect();
        clauses.push((
            Occur::Must,
            built.as_ref().map_or_else(
                || Box::new(AllQuery) as Box<dyn Query>,
                |b| b.query.box_clone(),
            ),
        ));
        let query = BooleanQuery::new(clauses);

        let facets = facets::TagCounts {
            field: TAG_VALUES.to_string(),
            facet_field: self.fields.tags,
            tags: q.facet_tags.clone(),
            within: access.clone(),
        };
        let limit = q.limit.max(1) as usize;
        let (total, addresses, facet_counts): (usize, Vec<DocAddress>, _) =
            if let Some(built) = &built {
                let filter_queries: Vec<Box<dyn Query>> =
                    filters.iter().map(|(_, f)| f.box_clone()).collect();
                let top =
                    ranked::Ranked::new(limit, offset as usize, built, &filter_queries, &searcher)
                        .map_err(backend)?;
                if top.prunes() {
                    // Every match counted (no scores), then the page found through the words'
                    // OR, pruned (see `ranked`).
                    let (total, facet_counts) = if q.facet_tags.is_empty() {
                        let total = match top.every_match(&Count) {
                            Some(every) => searcher.search(&query, &every),
                            None => searcher.search(&query, &Count),
                        };
                        (total.map_err(backend)?, BTreeMap::new())
                    } else {
                        let both = (Count, facets);
                        match top.every_match(&both) {
                            Some(every) => searcher.search(&query, &every),
                            None => searcher.search(&query, &both),
                        }
                        .map_err(backend)?
                    };
                    let mut top = top;
                    let top = if top.worth_pruning(total) {
                        largest_first(&searcher, &built.any_word(), &top)
                    } else {
                        searcher.search(&query, &top)
                    }
                    .map_err(backend)?;
                    (
                        total,
                        top.into_iter().map(|(_, a)| a).collect(),
                        facet_counts,
                    )
                } else {
                    // One pass over every match: counted, faceted and ranked.
                    let (total, top, facet_counts) = searcher
                        .search(&query, &(Count, top, facets))
                        .map_err(backend)?;
                    (
                        total,
                        top.into_iter().map(|(_, a)| a).collect(),
                        facet_counts,
                    )
                }
            } else {
                // Newest first; the same instant by record id, as in ranked results.
                let top = TopDocs::with_limit(limit).and_offset(offset as usize);
                let newest = top.order_by(move |segment: &tantivy::SegmentReader| {
                    let fast = segment.fast_fields();
                    let modified = fast.i64("modified").ok().map(|c| c.first_or_default_col(0));
                    let ids = fast.u64("tiebreak").ok().map(|c| c.first_or_default_col(0));
                    move |doc: tantivy::DocId| {
                        (
                            modified.as_ref().map_or(0, |c| c.get_val(doc)),
                            ids.as_ref().map_or(0, |c| c.get_val(doc)),
                        )
                    }
                });
                let (total, top, facet_counts) = searcher
                    .search(&query, &(Count, newest, facets))
                    .map_err(backend)?;
                (
                    total,
                    top.into_iter().map(|(_, a)| a).collect(),
                    facet_counts,
                )
            };

        // The words a misspelt word was searched as are marked as its own forms are.
        let mut marked = parsed.parts.clone();
        marked.extend(
            variants
                .values()
                .flat_map(|n| &n.words)
                .map(|v| query::Part {
                    words: vec![analysis::Word {
                        text: v.clone(),
                        from: 0,
                        to: 0,
                        position: 0,
                        compound: false,
                    }],
                    phrase: false,
                    quoted: false,
                }),
        );
        let mut snippets = Snippets::new(&marked, self.fields.text.body);
        let mut hits = Vec::with_capacity(addresses.len());
        for a in addresses {
            let doc: TantivyDocument = searcher.doc(a).map_err(backend)?;
            hits.push(self.hit(&doc, &mut snippets)?);
        }
        let mut facet_out = BTreeMap::new();
        let mut facet_counts = facet_counts;
        for t in &q.facet_tags {
            let mut values: Vec<(String, u64)> = facet_counts
                .remove(t)
                .unwrap_or_default()
                .into_iter()
                .collect();
            values.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            values.truncate(MAX_FACET_VALUES);
            facet_out.insert(t.clone(), values);
        }
        let shown = offset + hits.len() as u64;
        let total = total as u64;
        // Did you mean: few records found, and some word looks misspelt.
        let suggestion = if total < typos::SUGGEST_BELOW && !parsed.is_empty() {
            let found = match q.typos {
                true => corrections.clone(),
                false => self.variants(&searcher, &parsed, q, access.as_ref())?.1,
            };
            typos::suggestion(&q.text, &found)
        } else {
            None
        };
        Ok(Hits {
            corrections,
            suggestion,
            total,
            next_cursor: (shown < total && shown < MAX_DEPTH && !hits.is_empty())
                .then(|| encode_cursor(searcher.generation().generation_id(), shown)),
            hits,
            facets: facet_out,
        })
    }

    /// The searcher a cursor names (if still kept) and the offset it continues at.
    pub(crate) fn searcher_for(&self, cursor: Option<&str>) -> Result<(Searcher, u64)> {
        let current = self.reader.searcher();
        let mut pinned = self.pinned.lock();
        pinned.retain(|(_, _, at)| at.elapsed() < CURSOR_LIFETIME);
        let generation = current.generation().generation_id();
        if !pinned.iter().any(|(g, _, _)| *g == generation) {
            pinned.push_back((generation, current.clone(), Instant::now()));
            while pinned.len() > PINNED_SEARCHERS {
                pinned.pop_front();
            }
        }
        let Some(cursor) = cursor else {
            return Ok((current, 0));
        };
        let (g, offset) = decode_cursor(cursor)?;
        let searcher = pinned
            .iter()
            .find(|(pg, _, _)| *pg == g)
            .map(|(_, s, _)| s.clone())
            .unwrap_or(current);
        Ok((searcher, offset))
    }

    fn hit(&self, doc: &TantivyDocument, snippets: &mut Snippets) -> Result<Hit> {
        let f = &self.fields;
        let text = |field: Field| -> String {
            doc.get_first(field)
                .and_then(|v| v.as_str())
                .unwrap_or_default()
                .to_string()
        };
        let int = |field: Field| doc.get_first(field).and_then(|v| v.as_i64()).unwrap_or(0);
        let uuid = |field: Field| Uuid::parse_str(&text(field)).map_err(backend);
        let url = text(f.url);
        let body = text(f.body_shown);
        Ok(Hit {
            record_id: uuid(f.id)?,
            external_id: text(f.external_id),
            source_id: uuid(f.source)?,
            object_type_id: uuid(f.object_type)?,
            title: text(f.title_shown),
            url: (!url.is_empty()).then_some(url),
            snippet: snippets.snippet(&text(f.lang), &body),
            tags: serde_json::from_str(&text(f.tags_shown)).unwrap_or_default(),
            created_ms: int(f.created),
            modified_ms: int(f.modified),
        })
    }

    /// The neighbours of `parsed`'s plain words that look misspelt ([`typos`]), among the
    /// records of `access` (`q`'s reader's filter), and the corrections they make.
    fn variants(
        &self,
        searcher: &Searcher,
        parsed: &query::Parsed,
        q: &IndexQuery,
        access: Option<&AccessFilter>,
    ) -> Result<(query::Variants, Vec<Correction>)> {
        let lang = Some(analysis::query_language(&q.text));
        let mut variants = query::Variants::new();
        let mut corrections = Vec::new();
        let words = parsed
            .parts
            .iter()
            .filter(|p| !p.quoted)
            .flat_map(|p| p.words.iter().filter(|w| !w.compound));
        for word in words.map(|w| &w.text) {
            if variants.contains_key(word) {
                continue;
            }
            let Some(mut near) =
                typos::variants(searcher, self.fields.text.body, word, access).map_err(backend)?
            else {
                continue;
            };
            // A neighbour of the same stem (`papers`, `paper`) is found through the stem.
            let stem = analysis::stem(lang, word);
            near.words.retain(|v| analysis::stem(lang, v) != stem);
            if !near.words.is_empty() {
                corrections.push(Correction {
                    word: word.clone(),
                    matched: near.words.clone(),
                });
                variants.insert(word.clone(), near);
            }
        }
        Ok((variants, corrections))
    }

    /// The reader's access filter of `q`, if it has a reader.
    pub(crate) fn access(&self, q: &IndexQuery) -> Option<AccessFilter> {
        let viewer = q.viewer.as_ref()?;
        Some(AccessFilter::new(
            self.fields.allowed,
            viewer,
            Arc::clone(&self.filters),
        ))
    }

    /// The filters of `q`, its reader's `access` filter among them ([`TantivyIndex::access`]).
    pub(crate) fn filters(
        &self,
        q: &IndexQuery,
        access: Option<&AccessFilter>,
    ) -> Vec<(Occur, Box<dyn Query>)> {
        let f = &self.fields;
        let raw = |field: Field, v: &str| TermFilter::clause(Term::from_field_text(field, v));
        let mut out = vec![raw(f.workspace, &q.workspace_id.to_string())];
        if let Some(s) = q.source_id {
            out.push(raw(f.source, &s.to_string()));
        }
        if let Some(o) = q.object_type_id {
            out.push(raw(f.object_type, &o.to_string()));
        }
        if let Some(access) = access {
            out.push((Occur::Must, Box::new(access.clone())));
        }
        for t in &q.tags {
            let any: Vec<(Occur, Box<dyn Query>)> = t
                .values
                .iter()
                .map(|v| {
                    let facet = Facet::from_path([t.tag.as_str(), v.as_str()]);
                    let q: Box<dyn Query> = Box::new(TermQuery::new(
                        Term::from_facet(f.tags, &facet),
                        IndexRecordOption::Basic,
                    ));
                    (Occur::Should, q)
                })
                .collect();
            out.push(query::filter(if any.is_empty() {
                query::nothing()
            } else {
                Box::new(BooleanQuery::new(any))
            }));
        }
        let range = |field: Field, from: Option<i64>, to: Option<i64>| -> Option<Box<dyn Query>> {
            if from.is_none() && to.is_none() {
                return None;
            }
            let bound = |v: Option<i64>| match v {
                Some(v) => Bound::Included(Term::from_field_i64(field, v)),
                None => Bound::Unbounded,
            };
            Some(Box::new(RangeQuery::new(bound(from), bound(to))))
        };
        if let Some(r) = range(f.created_filter, q.created_from, q.created_to) {
            out.push(query::filter(r));
        }
        if let Some(r) = range(f.modified_filter, q.modified_from, q.modified_to) {
            out.push(query::filter(r));
        }
        out
    }
}

/// Runs `collector` over `query`'s matches as [`Searcher::search`] does, the largest segments
/// first on each of [`search_threads`]: a ranked page's collector shares the best floor
/// found so far between segments ([`ranked`]), and the largest segments find the highest.
fn largest_first<C: Collector>(
    searcher: &Searcher,
    query: &dyn Query,
    collector: &C,
) -> tantivy::Result<C::Fruit> {
    let scoring = if collector.requires_scoring() {
        tantivy::query::EnableScoring::enabled_from_searcher(searcher)
    } else {
        tantivy::query::EnableScoring::disabled_from_searcher(searcher)
    };
    let weight = query.weight(scoring)?;
    let readers = searcher.segment_readers();
    let mut order: Vec<usize> = (0..readers.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(readers[i].max_doc()));
    let next = AtomicUsize::new(0);
    let work = || -> tantivy::Result<Vec<(usize, <C::Child as tantivy::collector::SegmentCollector>::Fruit)>> {
        let mut fruits = Vec::new();
        loop {
            let k = next.fetch_add(1, Relaxed);
            let Some(&i) = order.get(k) else {
                return Ok(fruits);
            };
            let fruit = collector.collect_segment(weight.as_ref(), i as u32, &readers[i])?;
            fruits.push((i, fruit));
        }
    };
    let threads = search_threads().min(readers.len()).max(1);
    let mut all = std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..threads).map(|_| scope.spawn(work)).collect();
        let mut all = work()?;
        for h in helpers {
            match h.join() {
                Ok(fruits) => all.extend(fruits?),
                Err(_) => {
                    return Err(tantivy::TantivyError::InternalError(
                        "a search thread panicked".into(),
                    ));
                }
            }
        }
        Ok(all)
    })?;
    all.sort_by_key(|(i, _)| *i);
    collector.merge_fruits(all.into_iter().map(|(_, f)| f).collect())
}

fn encode_cursor(generation: u64, offset: u64) -> String {
    URL_SAFE_NO_PAD.encode(format!("{generation}.{offset}"))
}

fn decode_cursor(cursor: &str) -> Result<(u64, u64)> {
    let bad = || Error::invalid("cursor is not one this server issued: pass nextCursor as given");
    let raw = URL_SAFE_NO_PAD.decode(cursor).map_err(|_| bad())?;
    let text = std::str::from_utf8(&raw).map_err(|_| bad())?;
    let (g, o) = text.split_once('.').ok_or_else(bad)?;
    let offset: u64 = o.parse().map_err(|_| bad())?;
    if offset > MAX_DEPTH {
        return Err(bad());
    }
    Ok((g.parse().map_err(|_| bad())?, offset))
}
