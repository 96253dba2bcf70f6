/* The views behind audit align and audit bar (see views.h and docs/schema.md): why each map call
 * got the pages it got, and what the mappings of PCI BARs cost the IOTLB. Plain SQL: alignments
 * are x & -x, page sizes are picked from the bitmaps over a small table of powers of two. */
#include "analyzer/audit_align.h"
#include "analyzer/audit_bar.h"
#include "analyzer/views.h"

/* 4 KiB, 2 MiB and 1 GiB: the leaf levels of every x86 IOMMU page table (VT-d second level, AMD
 * v1 and v2), what a mapping could get where nothing recorded says otherwise. */
#define X86_PAGES "0x40201000"

/* The page sizes worth trying: every one any bitmap of the database names, and the x86 ones
 * (on Intel three rows, so the per-map subqueries below stay cheap). Every view reads it more
 * than once, so SQLite computes it once (no MATERIALIZED hint: SQLite before 3.35 could not read
 * the schema). */
#define SIZES_CTE \
	"pow(p) AS (SELECT 4096 UNION ALL SELECT p * 2 FROM pow WHERE p < 2251799813685248)," \
	"sizes(p) AS (SELECT p FROM pow WHERE p & " X86_PAGES \
	"  OR EXISTS (SELECT 1 FROM domains WHERE pgsize_bitmap & pow.p)" \
	"  OR EXISTS (SELECT 1 FROM iommus WHERE pgsize_bitmap & pow.p)" \
	"  OR EXISTS (SELECT 1 FROM sessions WHERE derive_pgsize_bitmap & pow.p))"

/* Whether a page of size p (a column named p) lands somewhere in the map of row r by the leaf
 * rule: iova and paddr agree modulo p, and a p-aligned page fits between iova and the end. Bit
 * operations only, so that IOVAs with bit 63 set cannot overflow into reals. */
#define LEAF_FITS(r) \
	"(" r ".iova & (p - 1)) = (" r ".paddr & (p - 1))" \
	" AND ((p - (" r ".iova & (p - 1))) & (p - 1)) + p <= " r ".size_bytes"

/* The lowest page size of bitmap b above page size w: b & -(2w) keeps the sizes above w. */
#define NEXT_PAGE(b, w) "((" b " & -(2 * " w ")) & -(" b " & -(2 * " w ")))"

/* How a physical address gets aligned to page size P (an expression): in a BAR, the nearest
 * aligned offsets (the next one only where the buffer still fits in the BAR); in host memory,
 * huge pages; without recorded BARs (an import) the session cannot tell which. */
#define PLACE(P) \
	"CASE WHEN bar_device IS NOT NULL THEN 'place the buffer at BAR offset ' ||" \
	"  " SIZE_TEXT( \
		"(bar_offset_bytes & -" P \
		")") " ||" \
		     "  CASE WHEN (bar_offset_bytes & -" P ") + " P \
		     " + size_bytes <= bar_size_bytes" \
		     "   THEN ' or ' || " SIZE_TEXT( \
			     "((bar_offset_bytes & -" P ") + " P \
			     ")") " ELSE '' END" \
				  " WHEN have_bars THEN CASE " P \
				  " WHEN 1073741824 THEN 'use hugetlb1g memory'" \
				  "  WHEN 2097152 THEN 'use hugetlb2m (or THP) memory'" \
				  "  ELSE 'use physically contiguous ' || " SIZE_TEXT( \
					  P) " || '-aligned memory' END" \
					     " ELSE 'place the buffer at a ' || " SIZE_TEXT( \
						     P) " || '-aligned physical address'" \
							"  || CASE " P \
							" WHEN 1073741824 THEN ' (host memory: hugetlb1g)'" \
							"   WHEN 2097152 THEN ' (host memory: hugetlb2m or THP)' ELSE '' END END"

/* How an IOVA gets aligned to page size P, with the map's IOVA rounded up as the example. In a
 * DMA API domain the kernel chose it: dma-iommu lays a scatterlist's segments out back to back,
 * so a segment after one of odd length starts misaligned. */
#define REALIGN_IOVA(P) \
	"CASE WHEN dma_api THEN 'the DMA API chose the IOVA, laying the scatterlist''s segments" \
	" out back to back: put segments of ' || " SIZE_TEXT( \
		P) " || ' multiples first'" \
		   " ELSE 'map at an IOVA aligned to ' || " SIZE_TEXT( \
			   P) " || ' (e.g. ' ||" \
			      " printf('0x%x', ((iova - 1) | (" P " - 1)) + 1) || ')' END"

/* What the audits know of a session and a domain: the units' page sizes (per session where its
 * units agree; per domain through its devices), the devices seen in each domain, whether BARs
 * were recorded and superpages turned off on the command line. */
#define CONTEXT_CTES \
	"unit AS (SELECT session_id, MIN(pgsize_bitmap) AS bitmap FROM iommus" \
	"  WHERE pgsize_bitmap != 0 GROUP BY session_id" \
	"  HAVING MIN(pgsize_bitmap) = MAX(pgsize_bitmap))," \
	"domain_unit AS (SELECT v.session_id, v.domain_ptr, MIN(i.pgsize_bitmap) AS bitmap" \
	"  FROM domain_devices_view v JOIN devices d ON d.session_id = v.session_id" \
	"   AND d.bdf = v.device" \
	"  JOIN iommus i ON i.session_id = d.session_id AND i.name = d.iommu_name" \
	"  WHERE i.pgsize_bitmap != 0 GROUP BY v.session_id, v.domain_ptr" \
	"  HAVING MIN(i.pgsize_bitmap) = MAX(i.pgsize_bitmap))," \
	"dev AS (SELECT session_id, domain_ptr, group_concat(device, ',') AS devices" \
	"  FROM (SELECT session_id, domain_ptr, device FROM domain_devices_view ORDER BY device)" \
	"  GROUP BY session_id, domain_ptr)," \
	"sess AS (SELECT s.session_id, NULLIF(s.derive_pgsize_bitmap, 0) AS derive_bitmap," \
	"  EXISTS (SELECT 1 FROM bars b WHERE b.session_id = s.session_id) AS have_bars," \
	"  EXISTS (SELECT 1 FROM boot_options o WHERE o.session_id = s.session_id" \
	"   AND o.name = 'intel_iommu' AND ',' || o.value || ',' LIKE '%,sp_off,%') AS sp_off" \
	"  FROM sessions s),"

/* The most 1 GiB frames of a BAR looked at: 64 TiB, more than any BAR yet (a row of bars that
 * says more is not believed past that). */
#define BAR_FRAMES_MAX "65536"

/* bar_frames: each BAR through the 1 GiB frames it spans, so that maps of host memory, the
 * most, meet no BAR at all. */
#define BAR_FRAMES_CTE \
	"bar_frames AS (SELECT session_id, start_addr >> 30 AS frame, bdf, bar_index, start_addr," \
	"  size_bytes FROM bars WHERE size_bytes > 0 AND start_addr >= 0" \
	"  UNION ALL SELECT session_id, frame + 1, bdf, bar_index, start_addr, size_bytes" \
	"  FROM bar_frames WHERE frame < (start_addr + size_bytes - 1) >> 30" \
	"   AND frame - (start_addr >> 30) < " BAR_FRAMES_MAX "),"

/* A map's BAR: its physical address (in table t) within a frame of the BAR. */
#define IN_BAR_FRAME(t) \
	"f.session_id = " t ".session_id AND f.frame = " t ".paddr >> 30" \
	"   AND " t ".paddr >= f.start_addr AND " t ".paddr - f.start_addr < f.size_bytes"

/* A map's pages of several sizes as text, summed per size, largest first ("1 GiB x 1 + 4 KiB
 * x 2"), from its driver_maps rows. */
#define MIXED_PAGES(map_id) \
	"(SELECT group_concat(t, ' + ')" \
	"   FROM (SELECT " SIZE_TEXT( \
		"pgsize_bytes") " || ' x ' || SUM(pgcount) AS t" \
				"    FROM driver_maps x WHERE x.map_id = " map_id \
				" AND x.op = 'map'" \
				"    GROUP BY pgsize_bytes ORDER BY pgsize_bytes DESC))"

/* pm: per map, the BAR its physical address falls in (bar_join: "LEFT JOIN" for every map,
 * "JOIN" for those in a BAR only) and the pages written. The pages text is left to PAGES_TEXT,
 * after grouping, where the map has pages of one size (the usual case); other maps get theirs
 * here (mixed_pages). */
#define MAP_PAGES_CTES(bar_join) \
	BAR_FRAMES_CTE \
	"pm AS (SELECT m.session_id, m.map_id, m.domain_ptr, m.iova, m.paddr, m.size_bytes," \
	"  f.bdf AS bar_device, f.bar_index, m.paddr - f.start_addr AS bar_offset_bytes," \
	"  f.size_bytes AS bar_size_bytes," \
	"  CASE WHEN MIN(g.pgsize_bytes) != MAX(g.pgsize_bytes) THEN " MIXED_PAGES( \
		"m.map_id") "   END AS mixed_pages," \
			    "  CASE WHEN MIN(g.source) = MAX(g.source) THEN MIN(g.source)" \
			    "   WHEN COUNT(g.source) > 0 THEN 'observed+derived' END AS pages_source," \
			    "  SUM(g.pgcount) AS entries, MAX(g.pgsize_bytes) AS written_page_bytes" \
			    "  FROM maps m " bar_join " bar_frames f ON " IN_BAR_FRAME( \
				    "m") "  LEFT JOIN driver_maps g ON g.map_id = m.map_id AND g.op = 'map' GROUP BY m.map_id),"

/* pm as MAP_PAGES_CTES has it, but per group of maps the session summary made (alike_maps,
 * analyzer/summary.h: alike maps, those in a BAR by exact paddr), with the group's first map
 * (map_id, iova, paddr) and its number of maps: what audit align and audit bar group further. */
#define GROUP_PAGES_CTES(bar_join) \
	BAR_FRAMES_CTE \
	"pm AS (SELECT mg.session_id, mg.first_map_id AS map_id, mg.maps, mg.domain_ptr, mg.iova," \
	"  mg.paddr, mg.size_bytes, f.bdf AS bar_device, f.bar_index," \
	"  mg.paddr - f.start_addr AS bar_offset_bytes, f.size_bytes AS bar_size_bytes," \
	"  CASE WHEN mg.page_mix IS NOT NULL THEN " MIXED_PAGES( \
		"mg.first_map_id") "   END AS mixed_pages, mg.pages_source, mg.entries, mg.written_page_bytes" \
				   "  FROM alike_maps mg " bar_join \
				   " bar_frames f ON " IN_BAR_FRAME("mg") "),"

/* The pages text of a row of pm (or of its groups) */
#define PAGES_TEXT "IFNULL(mixed_pages, " SIZE_TEXT("written_page_bytes") " || ' x ' || entries)"

/* a, then c: the rows of src with their domain's context. hw_bitmap: the page sizes the domain
 * uses (the domain's, else its IOMMU's, else the session's, else the x86 ones); possible: what
 * the IOMMU could use (the domain's and the unit's, or the x86 ones where the unit is unknown);
 * ref: those and the x86 sizes, what an IOMMU with superpages would use. dma_api:
 * __IOMMU_DOMAIN_DMA_API (bit 1) in the domain's type, a kernel DMA API domain. */
#define CONTEXT_JOIN_CTES(src) \
	"a AS (SELECT x.*, " PAGES_TEXT " AS pages, v.devices," \
	"  COALESCE(NULLIF(d.pgsize_bitmap, 0), du.bitmap, u.bitmap, s.derive_bitmap, " X86_PAGES \
	")" \
	"   AS hw_bitmap," \
	"  CASE WHEN NULLIF(d.pgsize_bitmap, 0) IS NOT NULL THEN 'domain'" \
	"   WHEN COALESCE(du.bitmap, u.bitmap) IS NOT NULL THEN 'iommu'" \
	"   WHEN s.derive_bitmap IS NOT NULL THEN 'session' ELSE 'x86' END AS hw_source," \
	"  COALESCE(du.bitmap, u.bitmap) AS unit_bitmap, s.have_bars, s.sp_off," \
	"  IFNULL(d.domain_type & 2 != 0, 0) AS dma_api" \
	"  FROM " src " x JOIN sess s ON s.session_id = x.session_id" \
	"  LEFT JOIN domains d ON d.session_id = x.session_id AND d.domain_ptr = x.domain_ptr" \
	"  LEFT JOIN domain_unit du ON du.session_id = x.session_id" \
	"   AND du.domain_ptr = x.domain_ptr" \
	"  LEFT JOIN unit u ON u.session_id = x.session_id" \
	"  LEFT JOIN dev v ON v.session_id = x.session_id AND v.domain_ptr = x.domain_ptr)," \
	"c AS (SELECT a.*, hw_bitmap | IFNULL(unit_bitmap, " X86_PAGES ") AS possible_bitmap," \
	"  hw_bitmap | IFNULL(unit_bitmap, 0) | " X86_PAGES " AS ref_bitmap FROM a),"

/* l, w, n, r: over the rows of c, the page sizes (see audit_align_maps_view) and the reason. The
 * alignments are capped at the largest page of ref that fits the length (larger alignment
 * changes no page), so that maps alike group together. page: the largest page written, else
 * the one the leaf rule expects. A fix aims at the largest page of the domain's that fits the
 * length and that fixing the misaligned side (or both) reaches. */
#define REASON_CTES \
	"l AS (SELECT c.*," \
	"  IFNULL((SELECT MAX(p) FROM sizes WHERE p <= c.size_bytes AND c.ref_bitmap & p), 4096)" \
	"   AS align_cap," \
	"  (SELECT MAX(p) FROM sizes WHERE c.hw_bitmap & p) AS hw_page_bytes," \
	"  (SELECT MAX(p) FROM sizes WHERE p <= c.size_bytes AND c.possible_bitmap & p)" \
	"   AS possible_page_bytes," \
	"  (SELECT MAX(p) FROM sizes WHERE p <= c.size_bytes AND c.hw_bitmap & p" \
	"   AND " LEAF_FITS( \
		"c") ") AS expected_page_bytes," \
		     "  (SELECT MAX(p) FROM sizes WHERE p <= c.size_bytes AND c.ref_bitmap & p" \
		     "   AND " LEAF_FITS( \
			     "c") ") AS aligned_page_bytes" \
				  "  FROM c)," \
				  "w AS (SELECT l.*, IFNULL(written_page_bytes, expected_page_bytes) AS page," \
				  "  CASE WHEN iova & (align_cap - 1) = 0 THEN align_cap ELSE iova & -iova END" \
				  "   AS iova_align_bytes," \
				  "  CASE WHEN paddr & (align_cap - 1) = 0 THEN align_cap ELSE paddr & -paddr END" \
				  "   AS paddr_align_bytes FROM l)," \
				  "n AS (SELECT w.*, " NEXT_PAGE( \
					  "ref_bitmap", \
					  "page") " AS next_ref," \
						  "  " NEXT_PAGE( \
							  "hw_bitmap", \
							  "page") " AS next_hw FROM w)," \
								  "r AS (SELECT n.*, CASE WHEN page IS NULL THEN NULL" \
								  "  WHEN page >= possible_page_bytes THEN CASE" \
								  "   WHEN next_ref != 0 AND next_ref <= size_bytes THEN 'hardware'" \
								  "   WHEN next_ref != 0 THEN 'length' ELSE 'none' END" \
								  "  WHEN next_hw = 0 OR next_hw > size_bytes THEN 'hardware'" \
								  "  WHEN expected_page_bytes > page THEN 'driver'" \
								  "  WHEN iova & (next_hw - 1) != 0 AND paddr & (next_hw - 1) != 0" \
								  "   THEN 'iova and paddr misaligned'" \
								  "  WHEN iova & (next_hw - 1) != 0 THEN 'iova misaligned'" \
								  "  WHEN paddr & (next_hw - 1) != 0 THEN 'paddr misaligned' ELSE 'driver' END AS reason," \
								  "  (SELECT MAX(p) FROM sizes WHERE p <= n.size_bytes AND n.hw_bitmap & p" \
								  "   AND n.paddr & (p - 1) = 0) AS iova_fix_page," \
								  "  (SELECT MAX(p) FROM sizes WHERE p <= n.size_bytes AND n.hw_bitmap & p" \
								  "   AND n.iova & (p - 1) = 0) AS paddr_fix_page," \
								  "  (SELECT MAX(p) FROM sizes WHERE p <= n.size_bytes AND n.hw_bitmap & p) AS both_fix_page" \
								  "  FROM n)"

/* The fix, over the columns of r. */
#define FIX \
	"CASE reason" \
	" WHEN 'iova misaligned' THEN " SIZE_TEXT( \
		"iova_fix_page") " || ' pages need the IOVA ' ||" \
				 "  " SIZE_TEXT("iova_fix_page") " || '-aligned: ' || " REALIGN_IOVA("iova_fix_page") " WHEN 'paddr misaligned' THEN " SIZE_TEXT( \
					 "paddr_fix_page") " || ' pages need paddr ' ||" \
							   "  " SIZE_TEXT("paddr_fix_page") " || '-aligned: ' || " PLACE("paddr_fix_page") " WHEN 'iova and paddr misaligned' THEN " SIZE_TEXT("both_fix_page") "  || ' pages need the IOVA and paddr ' || " SIZE_TEXT( \
								   "both_fix_page") " || '-aligned: ' ||" \
										    "  " PLACE("both_fix_page") " || '; ' || " REALIGN_IOVA("both_fix_page") " WHEN 'driver' THEN 'the driver wrote ' || " SIZE_TEXT( \
											    "page") " || ' pages where the" \
												    " alignment and the domain''s page sizes allow ' || " SIZE_TEXT( \
													    "expected_page_bytes") "  || ': a driver or kernel limit'" \
																   " WHEN 'hardware' THEN CASE WHEN page < possible_page_bytes" \
																   "  THEN 'the domain''s page sizes stop at ' || " SIZE_TEXT("hw_page_bytes") "   || ' where the IOMMU has ' || " SIZE_TEXT( \
																	   "possible_page_bytes") " || ' pages: ' ||" \
																				  "   CASE WHEN sp_off THEN 'boot without intel_iommu=sp_off'" \
																				  "    ELSE 'superpages are off for this domain (intel_iommu=sp_off?)' END" \
																				  "  ELSE 'this IOMMU has no ' || " SIZE_TEXT( \
																					  "next_ref") " || ' pages' END" \
																						      " END"

/* The columns of audit_align_maps_view after session_id and map_id (r's). */
#define ALIGN_COLUMNS \
	"domain_ptr, devices, iova, paddr, size_bytes, bar_device, bar_index, bar_offset_bytes," \
	" bar_size_bytes, iova_align_bytes, paddr_align_bytes, pages, pages_source, entries," \
	" written_page_bytes, expected_page_bytes, aligned_page_bytes, hw_page_bytes," \
	" possible_page_bytes, hw_bitmap, hw_source, possible_bitmap, reason, " FIX " AS fix"

/* SQL text, laid out as SQL */
/* clang-format off */
const char analyzer_audit_views_sql[] =
/* Per map: the pages it got (entries, the largest written_page_bytes), the largest page the
 * leaf rule gives it (expected_page_bytes), the largest the alignment of iova and paddr and the
 * length allow (aligned_page_bytes), the largest of the domain (hw_page_bytes), the largest a
 * mapping of that length could get on this IOMMU if aligned (possible_page_bytes), why its pages
 * are not larger (reason) and what would make them so (fix). */
"DROP VIEW IF EXISTS audit_align_maps_view;"
"CREATE VIEW audit_align_maps_view AS WITH RECURSIVE " SIZES_CTE "," CONTEXT_CTES
"  " MAP_PAGES_CTES("LEFT JOIN") CONTEXT_JOIN_CTES("pm") REASON_CTES
"  SELECT session_id, map_id, " ALIGN_COLUMNS " FROM r;"

/* Per session: the map calls grouped where alike (same domain, size, capped alignments, pages,
 * and so the same reason), most bytes below possible_page_bytes first (short_bytes). iova,
 * paddr and fix are those of the first map (first_map_id). The maps come grouped by the session
 * summary (alike_maps: by their offsets within the largest power of two not above their
 * length), then by their offsets within the largest page of the database that fits their
 * length (every reason depends on those only), so that the reasons are worked out once per such
 * group. */
"DROP VIEW IF EXISTS audit_align_view;"
"CREATE VIEW audit_align_view AS WITH RECURSIVE " SIZES_CTE "," CONTEXT_CTES
"  " GROUP_PAGES_CTES("LEFT JOIN")
"k AS (SELECT pm.*, IFNULL((SELECT MAX(p) FROM sizes WHERE p <= pm.size_bytes), 4096) AS cap"
"  FROM pm),"
"g AS (SELECT session_id, MIN(map_id) AS map_id, SUM(maps) AS maps, domain_ptr, iova, paddr,"
"  size_bytes, bar_device, bar_index, bar_offset_bytes, bar_size_bytes, mixed_pages,"
"  pages_source, entries, written_page_bytes FROM k"
"  GROUP BY session_id, domain_ptr, size_bytes, iova & (cap - 1), paddr & (cap - 1),"
"   bar_device, bar_index, bar_offset_bytes, mixed_pages, pages_source, entries,"
"   written_page_bytes)," CONTEXT_JOIN_CTES("g") REASON_CTES ","
"z AS (SELECT session_id, SUM(maps) AS maps, SUM(maps) * size_bytes AS total_bytes,"
"  CASE WHEN page < possible_page_bytes THEN SUM(maps) * size_bytes ELSE 0 END"
"   AS short_bytes, MIN(map_id) AS first_map_id, " ALIGN_COLUMNS
"  FROM r GROUP BY session_id, domain_ptr, size_bytes, bar_device, bar_index,"
"   bar_offset_bytes, iova_align_bytes, paddr_align_bytes, pages, pages_source, entries,"
"   written_page_bytes, expected_page_bytes, aligned_page_bytes, hw_page_bytes,"
"   possible_page_bytes, hw_bitmap, hw_source, reason)"
"  SELECT ROW_NUMBER() OVER (PARTITION BY session_id"
"   ORDER BY short_bytes DESC, total_bytes DESC, first_map_id) AS group_no, * FROM z;"

/* Per session: bytes mapped with the largest page possible for their length on this IOMMU,
 * below it, and with pages unknown (no driver_maps row). */
"DROP VIEW IF EXISTS audit_align_summary_view;"
"CREATE VIEW audit_align_summary_view AS " AUDIT_ALIGN_SUMMARY_SQL("audit_align_view") ";"

/* Per window of a PCI BAR mapped (its map calls alike counted in maps: same offset, size,
 * domain, pages and offset of the IOVA within the largest power of two not above the size),
 * GPU BAR1 first: where in the BAR, the IOTLB entries its pages take (entries), and those it
 * would take aligned to the largest pages the IOMMU has (best_pages, best_entries: the largest
 * first, then the rest). iova and fix are those of the first map (first_map_id). */
"DROP VIEW IF EXISTS audit_bar_view;"
"CREATE VIEW audit_bar_view AS WITH RECURSIVE " SIZES_CTE "," CONTEXT_CTES
"  " GROUP_PAGES_CTES("JOIN")
"k AS (SELECT pm.*, IFNULL((SELECT MAX(p) FROM pow WHERE p <= pm.size_bytes), 4096) AS span"
"  FROM pm),"
"g AS (SELECT session_id, MIN(map_id) AS map_id, SUM(maps) AS maps, domain_ptr, iova, paddr,"
"  size_bytes, bar_device, bar_index, bar_offset_bytes, bar_size_bytes, mixed_pages,"
"  pages_source, entries, written_page_bytes FROM k"
"  GROUP BY session_id, bar_device, bar_index, bar_offset_bytes, size_bytes, domain_ptr,"
"   iova & (span - 1), mixed_pages, pages_source, entries, written_page_bytes)," CONTEXT_JOIN_CTES("g") REASON_CTES ","
"best AS (SELECT r.map_id, p, (CASE WHEN " NEXT_PAGE("r.possible_bitmap", "p") " = 0"
"   THEN r.size_bytes ELSE r.size_bytes % " NEXT_PAGE("r.possible_bitmap", "p") " END) / p AS n"
"  FROM r JOIN sizes ON r.possible_bitmap & p AND p <= r.size_bytes"
"  ORDER BY r.map_id, p DESC),"
"best_pages AS (SELECT map_id, SUM(n) AS entries,"
"  group_concat(" SIZE_TEXT("p") " || ' x ' || n, ' + ') AS pages"
"  FROM best WHERE n > 0 GROUP BY map_id)"
"SELECT r.session_id,"
"  EXISTS (SELECT 1 FROM gpu_bar1 g WHERE g.session_id = r.session_id AND g.bdf = r.bar_device"
"   AND r.paddr >= g.start_addr AND r.paddr - g.start_addr < g.size_bytes)"
"  OR (r.bar_index = 1 AND EXISTS (SELECT 1 FROM devices d WHERE d.session_id = r.session_id"
"   AND d.bdf = r.bar_device AND d.vendor_id = 0x10de AND d.class_code >> 16 = 3)) AS gpu_bar1,"
"  r.bar_device, r.bar_index, r.bar_size_bytes, r.bar_offset_bytes, r.size_bytes, r.maps,"
"  r.map_id AS first_map_id, r.domain_ptr, r.devices, r.iova, r.paddr, r.iova_align_bytes,"
"  r.paddr_align_bytes, r.pages, r.pages_source, r.entries,"
"  r.possible_page_bytes AS best_page_bytes, b.pages AS best_pages, b.entries AS best_entries,"
"  r.reason, " FIX " AS fix"
"  FROM r LEFT JOIN best_pages b ON b.map_id = r.map_id;"

/* Per session and BAR with mappings: the windows of audit_bar_view together. */
"DROP VIEW IF EXISTS audit_bar_summary_view;"
"CREATE VIEW audit_bar_summary_view AS " AUDIT_BAR_SUMMARY_SQL("audit_bar_view") ";";
/* clang-format on */
