// UK cities and large towns; row format and flags as in cities.ts.
export const UK_CITY_ROWS = `
London|Greater London;City of London|GB|
Birmingham||GB|
Manchester|Greater Manchester|GB|
Liverpool||GB|
Leeds||GB|
Sheffield||GB|
Bristol||GB|
Newcastle upon Tyne|Newcastle;Newcastle-upon-Tyne|GB|
Newcastle-under-Lyme|Newcastle under Lyme|GB|
Nottingham||GB|
Leicester||GB|
Coventry||GB|
Bradford||GB|
Hull|Kingston upon Hull|GB|
Stoke-on-Trent|Stoke;Stoke on Trent|GB|
Wolverhampton||GB|
Derby||GB|?
Plymouth||GB|
Southampton||GB|
Portsmouth||GB|
Reading||GB|?
Brighton|Brighton and Hove;Brighton & Hove|GB|
Oxford||GB|
Cambridge||GB|
York||GB|
Exeter||GB|
Bath||GB|?
Wells||GB|?
Norwich||GB|
Ipswich||GB|
Peterborough||GB|
Milton Keynes||GB|
Northampton||GB|
Luton||GB|
Swindon||GB|
Gloucester||GB|
Cheltenham||GB|
Worcester||GB|?
Hereford||GB|
Lincoln||GB|?
Chester||GB|?
Lancaster||GB|?
Preston||GB|?
Blackpool||GB|
Blackburn||GB|
Bolton||GB|
Wigan||GB|
Warrington||GB|
Stockport||GB|
Salford||GB|
Oldham||GB|
Rochdale||GB|
Huddersfield||GB|
Wakefield||GB|
Halifax||GB|?
Doncaster||GB|
Rotherham||GB|
Barnsley||GB|
Middlesbrough||GB|
Sunderland||GB|
Gateshead||GB|
Durham||GB|?
Darlington||GB|
Hartlepool||GB|
Carlisle||GB|
Canterbury||GB|
Maidstone||GB|
Guildford||GB|
Woking||GB|
Crawley||GB|
Chelmsford||GB|
Colchester||GB|
Southend-on-Sea|Southend|GB|
Basildon||GB|
Watford||GB|
St Albans|St. Albans;Saint Albans|GB|
Slough||GB|?
Bournemouth||GB|
Poole||GB|
Bedford||GB|
Harrogate||GB|
Scarborough||GB|
Telford||GB|
Shrewsbury||GB|
Chesterfield||GB|
Mansfield||GB|
Winchester||GB|
Salisbury||GB|
Truro||GB|
Torquay||GB|
Eastbourne||GB|
Hastings||GB|
Worthing||GB|
Dover||GB|?
Folkestone||GB|
Margate||GB|
Stevenage||GB|
Aylesbury||GB|
High Wycombe||GB|
Basingstoke||GB|
Newbury||GB|
Dudley||GB|
Walsall||GB|
Solihull||GB|
Nuneaton||GB|
Rugby||GB|?
Kettering||GB|
Grimsby||GB|
Scunthorpe||GB|
Birkenhead||GB|
Southport||GB|
Croydon||GB|
Kingston upon Thames|Kingston|GB|?
Richmond||GB|?
Glasgow||GB|
Edinburgh||GB|
Aberdeen||GB|
Dundee||GB|
Inverness||GB|
Stirling||GB|?
Perth||GB|?
Paisley||GB|
East Kilbride||GB|
Livingston||GB|
Ayr||GB|
Kilmarnock||GB|
Dunfermline||GB|
Kirkcaldy||GB|
Falkirk||GB|
St Andrews|St. Andrews|GB|
Cardiff||GB|
Swansea||GB|
Newport||GB|?
Wrexham||GB|
Bangor||GB|?
Aberystwyth||GB|
Llandudno||GB|
Bridgend||GB|
Belfast||GB|
Londonderry|Derry|GB|
Lisburn||GB|
Newry||GB|
Armagh||GB|
Enniskillen||GB|
Ballymena||GB|
St Helier||JE|
St Peter Port||GG|
Douglas||IM|?
`;
